package daemon

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/toolcage/toolcage/daemon/config"
	"github.com/toolcage/toolcage/daemon/ui"
)

// The review page (daemon/ui) as the daemon serves it: its config, the
// backend it reads and acts through (the same dispatcher, catalog, store
// and admin log the socket API's handlers use), and the person-only
// socket call that mints a login link.

// uiServer is the running review page: its listener, server and pages.
type uiServer struct {
	ln    net.Listener
	srv   *http.Server
	pages *ui.Server
}

// listenUI binds ui.listen; nil when it is off. It runs before the
// dispatcher is made (the listener's address is denied to every tool),
// the page is built by buildUI once the API server exists.
func (d *Daemon) listenUI() (*uiServer, error) {
	ln, err := config.ListenLoopback("ui.listen", d.cfg.UI.Listen)
	if ln == nil || err != nil {
		return nil, err
	}
	return &uiServer{ln: ln}, nil
}

// buildUI builds the review page on the API server's backend.
func (d *Daemon) buildUI() error {
	if d.ui == nil {
		return nil
	}
	pages, err := ui.New(ui.Config{Addr: d.ui.ln.Addr().String(), LoginTTL: d.cfg.UI.LoginTTL,
		SessionTTL: d.cfg.UI.SessionTTL, Log: d.log}, d.api.UIBackend())
	if err != nil {
		return err
	}
	d.ui.pages = pages
	d.ui.srv = &http.Server{
		Handler:           pages.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       d.cfg.API.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// serveUI serves the review page and logs a first login link.
func (d *Daemon) serveUI() {
	if d.ui == nil {
		return
	}
	go func() {
		if err := d.ui.srv.Serve(d.ui.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("review page server", "err", err)
		}
	}()
	link, exp := d.ui.pages.LoginURL(d.personID())
	d.log.Info("serving the review page; log in with this link (once, until it expires) or run `toolcage ui open`",
		"addr", d.ui.ln.Addr().String(), "login", link, "expires", exp.Format(time.RFC3339))
}

// UIAddr is the address ui.listen bound, or "" when it is off.
func (d *Daemon) UIAddr() string {
	if d.ui == nil {
		return ""
	}
	return d.ui.ln.Addr().String()
}

// personID names the daemon's own user, as the socket's person would be.
func (d *Daemon) personID() string { return "uid:" + strconv.Itoa(os.Getuid()) }
