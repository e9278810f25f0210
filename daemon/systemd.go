package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/coreos/go-systemd/v22/activation"
	sdaemon "github.com/coreos/go-systemd/v22/daemon"

	"github.com/toolcage/toolcage/daemon/config"
)

// systemd integration: socket activation (the API socket is systemd's,
// passed as fd 3 with LISTEN_FDS and LISTEN_PID) and sd_notify (READY=1
// once the API is served, STOPPING=1 when shutdown begins). Both are
// no-ops when the variables are not set, so the same binary runs under
// systemd, under another supervisor or in a terminal.

// activatedListener returns the one Unix stream socket systemd passed to
// this process, or nil when it passed none (LISTEN_PID names another
// process, or LISTEN_FDS is unset). The LISTEN_* variables are removed
// from the environment either way: no child may take the socket for its
// own.
func activatedListener() (*net.UnixListener, error) {
	files := activation.Files(true)
	if len(files) == 0 {
		return nil, nil
	}
	defer func() {
		for _, f := range files {
			f.Close() // FileListener made its own copy
		}
	}()
	if len(files) > 1 {
		return nil, fmt.Errorf("socket activation: systemd passed %d sockets; toolcage serves exactly one (one ListenStream= in toolcage.socket)", len(files))
	}
	ln, err := net.FileListener(files[0])
	if err != nil {
		return nil, fmt.Errorf("socket activation: fd 3 is not a listening socket: %w", err)
	}
	ul, ok := ln.(*net.UnixListener)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("socket activation: fd 3 is a %s socket, not a Unix stream socket (ListenStream=/path)", ln.Addr().Network())
	}
	if ul.Addr().String() == "" || ul.Addr().String()[0] == '@' {
		ul.Close()
		return nil, errors.New("socket activation: the socket has no path in the file system; give ListenStream= a path, whose 0600 mode keeps other users out")
	}
	// Closing our copy must never unlink systemd's socket file.
	ul.SetUnlinkOnClose(false)
	return ul, nil
}

// listenAPI returns the socket the API is served on: systemd's when it
// passed one (its path then replaces the configured one, which is left
// alone), else a new one at cfg.Socket.
func (d *Daemon) listenAPI() (net.Listener, error) {
	ul, err := activatedListener()
	if err != nil {
		return nil, err
	}
	if ul == nil {
		return config.ListenSocket(d.cfg.Socket)
	}
	path := ul.Addr().String()
	// systemd makes the socket 0666 unless SocketMode= says otherwise; the
	// peer check would still hold, but the socket's mode is the first wall.
	if err := os.Chmod(path, 0o600); err != nil {
		ul.Close()
		return nil, fmt.Errorf("socket activation: socket mode: %w", err)
	}
	if path != d.cfg.Socket {
		d.log.Info("socket activation: serving the socket systemd passed instead of the configured one", "socket", path, "configured", d.cfg.Socket)
	}
	d.cfg.Socket = path
	d.activated = true
	return ul, nil
}

// sdNotify tells systemd (NOTIFY_SOCKET) about a state change; without
// NOTIFY_SOCKET it does nothing. A failure is logged, never fatal: the
// daemon serves whether or not its supervisor hears about it.
func sdNotify(log *slog.Logger, state string) {
	if _, err := sdaemon.SdNotify(false, state); err != nil {
		log.Warn("sd_notify failed", "state", state, "err", err)
	}
}
