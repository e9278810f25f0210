package config

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// loopbackKeys are the config keys that take a loopback listen address.
var loopbackKeys = []string{"ui.listen", "metrics.listen", "mcp.listen"}

// Every loopback key takes the same addresses and refuses the same ones,
// with an error that names the key.
func TestLoopbackListen(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		wantErr string
	}{
		{"", ""},
		{"127.0.0.1:9464", ""},
		{"127.3.4.5:0", ""},
		{"[::1]:9464", ""},
		{"127.0.0.1:65535", ""},
		{"127.0.0.1:65536", "bad port"},
		{"127.0.0.1:99999", "bad port"},
		{"127.0.0.1:-1", "bad port"},
		{"127.0.0.1:", "bad port"},
		{"127.0.0.1:http", "bad port"},
		{"127.0.0.1", "want host:port on loopback, like 127.0.0.1:"},
		{"0.0.0.0:9464", "must be a loopback IP"},
		{":9464", "must be a loopback IP"},
		{"[::]:9464", "must be a loopback IP"},
		{"192.168.1.10:9464", "must be a loopback IP"},
		{"localhost:9464", "must be a loopback IP"},
		{"[::ffff:10.0.0.1]:9464", "must be a loopback IP"},
	} {
		for _, key := range loopbackKeys {
			_, err := Load("", map[string]any{key: tc.addr, "data_dir": t.TempDir()})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%s=%q: %v", key, tc.addr, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), key+": "+tc.wantErr)):
				t.Errorf("%s=%q: err %v, want %q", key, tc.addr, err, key+": "+tc.wantErr)
			}
		}
	}
}

// A listen address the daemon cannot bind fails New with the key's name,
// for each key; an address in use is the simplest such.
func TestLoopbackListenInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, key := range loopbackKeys {
		ln, err := ListenLoopback(key, busy.Addr().String())
		if err == nil {
			ln.Close()
			t.Fatalf("%s: bound an address in use", key)
		}
		if !strings.HasPrefix(err.Error(), key+": ") {
			t.Errorf("%s: error does not name the key: %v", key, err)
		}
	}
	if ln, err := ListenLoopback("ui.listen", ""); ln != nil || err != nil {
		t.Errorf("off: %v, %v", ln, err)
	}
}

// Whatever the check accepts is off or a loopback IP with a port in range.
func FuzzCheckLoopbackListen(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1:9464", "[::1]:1", "0.0.0.0:1", "localhost:1", "[::ffff:127.0.0.1]:1", "127.0.0.1:", "1.2.3.4:5", "127.0.0.1:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if CheckLoopbackListen("metrics.listen", addr, "127.0.0.1:9464") != nil || addr == "" {
			return
		}
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("accepted %q: %v", addr, err)
		}
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			t.Fatalf("accepted non-loopback %q", addr)
		}
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			t.Fatalf("accepted bad port %q", addr)
		}
	})
}
