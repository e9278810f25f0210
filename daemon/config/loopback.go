package config

import (
	"fmt"
	"net"
	"strconv"
)

// The daemon's TCP listeners (ui.listen, metrics.listen, mcp.listen) are
// loopback only: one check at config load and one way to open them, so the
// three keys take the same addresses and fail with the same words.

// CheckLoopbackListen accepts "" (off) or host:port with a loopback IP and
// a numeric port for the config key named key; example is a good value to
// show. A host name is refused: what it resolves to could change.
func CheckLoopbackListen(key, addr, example string) error {
	if addr == "" {
		return nil
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: want host:port on loopback, like %s: %w", key, example, err)
	}
	if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: must be a loopback IP address (127.0.0.0/8 or ::1), got %q", key, addr)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s: bad port in %q", key, addr)
	}
	return nil
}

// ListenLoopback opens a TCP address CheckLoopbackListen passed at config
// load; nil when addr is "" (off).
func ListenLoopback(key, addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return ln, nil
}
