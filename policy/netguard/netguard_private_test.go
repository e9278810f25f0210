package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// TestPrivateHostsEntries: what an allow_private_hosts entry may be, and
// the errors of what it may not.
func TestPrivateHostsEntries(t *testing.T) {
	for _, k := range []struct {
		entry string
		want  string // "" or part of the error
	}{
		{"localhost", ""},
		{"localhost:8080", ""},
		{"dev.local.test", ""},
		{"127.0.0.1", ""},
		{"127.0.0.1:9000", ""},
		{"::1", ""},
		{"[::1]", ""},
		{"[::1]:8080", ""},
		{"10.0.0.0/8", ""},
		{"10.0.0.0/8:5432", ""},
		{"fd00::/8", ""},
		{"[fd00::/8]:5432", ""},
		{"!127.0.0.1:9464", ""},
		{"![::1]:9464", ""},
		{"!10.0.0.0/8", ""},
		{"!10.0.0.0/8:22", ""},
		{"!::1", ""},
		{"", "empty"},
		{"localhost:0", "not a valid port"},
		{"localhost:65536", "not a valid port"},
		{"localhost:http", "not a valid port"},
		{"10.0.0.1/8", "bits set past its length"},
		{"10.0.0.0/33", "not an address range"},
		{"::ffff:10.0.0.0/104", "IPv4"},
		{"*.local.test", "wildcards"},
		{"http://localhost", "scheme"},
		{"!localhost:9464", "a deny entry names an address"},
		{"[::1", "unclosed"},
		{"[::1]x", "want :port"},
		{"fe80::1%eth0", "only a host"},
		{"local/host", "not an address range"},
	} {
		err := CheckPrivateHosts([]string{k.entry})
		if k.want == "" && err != nil || k.want != "" && (err == nil || !strings.Contains(err.Error(), k.want)) {
			t.Errorf("%q: %v, want %q", k.entry, err, k.want)
		}
	}
	many := make([]string, maxPrivateEntries+1)
	for i := range many {
		many[i] = "h" + strconv.Itoa(i) + ".test"
	}
	if err := CheckPrivateHosts(many[:maxPrivateEntries]); err != nil {
		t.Errorf("%d entries: %v", maxPrivateEntries, err)
	}
	if err := CheckPrivateHosts(many); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d entries: %v, want a refusal naming the cap", len(many), err)
	}
}

// TestPrivateHostsPorts: entries with a port open that port only; ranges
// open the private addresses in them for any allowed host; a deny entry
// wins over every other entry, public addresses included; never-allowed
// classes stay refused whatever the list says.
func TestPrivateHostsPorts(t *testing.T) {
	g, err := New(Config{AllowedDomains: []string{"*"}, AllowPrivateHosts: []string{
		"localhost:8080", "dev.local.test", "127.0.0.1", "[::1]:8080",
		"10.1.0.0/16:5432", "fd00:1::/32", "192.168.0.0/16",
		"!127.0.0.1:9464", "![::1]:9464", "!192.168.1.0/24:22", "!93.184.216.34:25", "!10.1.2.3",
		"169.254.0.0/16", // link-local: never, whatever an entry says
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		host string
		addr string
		ok   bool
	}{
		{"localhost", "127.0.0.1:8080", true},
		{"localhost", "127.0.0.1:8081", false},
		{"localhost", "[::1]:8080", true},
		{"dev.local.test", "127.0.0.1:1234", true},
		{"dev.local.test", "127.0.0.1:9464", false}, // the daemon's listener
		{"127.0.0.1", "127.0.0.1:80", true},
		{"127.0.0.1", "127.0.0.1:9464", false},
		{"127.0.0.1", "[::ffff:127.0.0.1]:9464", false},
		{"::1", "[::1]:8080", true},
		{"::1", "[::1]:8081", false},
		{"[::1]", "[::1]:9464", false},
		{"db.test", "10.1.2.4:5432", true},
		{"db.test", "10.1.2.4:5433", false},
		{"db.test", "10.1.2.3:5432", false}, // denied on every port
		{"db.test", "10.2.0.1:5432", false},
		{"v6.test", "[fd00:1::5]:443", true},
		{"v6.test", "[fd00:2::5]:443", false},
		{"lan.test", "192.168.7.7:22", true},
		{"lan.test", "192.168.1.7:22", false},
		{"lan.test", "192.168.1.7:80", true},
		{"public.test", "93.184.216.34:443", true},
		{"public.test", "93.184.216.34:25", false}, // a deny entry holds for public addresses too
		{"link.test", "169.254.169.254:80", false},
		{"link.test", "169.254.1.1:80", false},
		{"other.test", "127.0.0.1:8080", false},
	} {
		ap := netip.MustParseAddrPort(k.addr)
		err := g.CheckAddr(k.host, ap)
		if k.ok != (err == nil) {
			t.Errorf("CheckAddr(%q, %s) = %v, want ok=%v", k.host, ap, err, k.ok)
		}
		var nd *DeniedError
		if err != nil && (!errors.As(err, &nd) || nd.Reason == "") {
			t.Errorf("CheckAddr(%q, %s): %T, want a *DeniedError with a reason", k.host, ap, err)
		}
	}
	// The URL check reads the same rules on the URL's port.
	for _, k := range []struct {
		url  string
		want string // "" or part of the reason
	}{
		{"http://127.0.0.1:8000/", ""},
		{"http://127.0.0.1:9464/metrics", "denied in allow_private_hosts"},
		{"http://[::1]:8080/", ""},
		{"http://[::1]/", "other ports than 80"},
		{"https://10.1.2.4:5432/", ""},
		{"https://10.1.2.4/", "other ports than 443"},
	} {
		_, err := g.CheckURL(k.url)
		if k.want == "" && err != nil || k.want != "" && (err == nil || !strings.Contains(err.Error(), k.want)) {
			t.Errorf("CheckURL(%s) = %v, want %q", k.url, err, k.want)
		}
	}
}

// TestDenyEntryDial: through DialContext (the check that holds: the
// socket address actually connected), a listener named by DenyEntry is
// refused even to a host allow_private_hosts names on every port, and a
// listener beside it on another port is reached.
func TestDenyEntryDial(t *testing.T) {
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		lns = append(lns, ln)
	}
	daemon := netip.MustParseAddrPort(lns[0].Addr().String())
	g, err := New(Config{AllowedDomains: []string{"localhost", "127.0.0.1"}, AllowPrivateHosts: []string{"localhost", "127.0.0.1", DenyEntry(daemon)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		c, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(int(daemon.Port()))))
		var nd *DeniedError
		if err == nil || !errors.As(err, &nd) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("dial %s at the daemon's listener %s: %v, want refused", host, daemon, err)
		}
		other := lns[1].Addr().(*net.TCPAddr).Port
		c, err = g.DialContext(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(other)))
		if err != nil {
			t.Fatalf("dial %s at another local port %d: %v", host, other, err)
		}
		c.Close()
	}
	if got := DenyEntry(netip.MustParseAddrPort("[::ffff:127.0.0.1]:9464")); got != "!127.0.0.1:9464" {
		t.Fatalf("DenyEntry of a mapped address = %q", got)
	}
}

// FuzzPrivateHosts: the parser never panics; an entry it accepts gives a
// guard; a deny entry's own address and port are refused by that guard
// whatever other entries say.
func FuzzPrivateHosts(f *testing.F) {
	for _, s := range []string{"localhost", "localhost:8080", "[::1]:8080", "10.0.0.0/8:5432", "[fd00::/8]:80",
		"!127.0.0.1:9464", "![::1]:1", "!10.0.0.0/8", "::1", "[::1", "10.0.0.1/8", "!localhost", "a:b:c", "[]:", "!:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		g, err := New(Config{AllowedDomains: []string{"*"}, AllowPrivateHosts: []string{entry, "127.0.0.1", "0.0.0.0/0", "::/0"}})
		if err != nil {
			return
		}
		e := strings.TrimSpace(entry)
		if !strings.HasPrefix(e, "!") {
			return
		}
		addr, port, err := splitPrivatePort(e[1:])
		if err != nil {
			t.Fatalf("%q accepted but does not split: %v", entry, err)
		}
		pfx, err := parsePrefix(addr)
		if err != nil {
			t.Fatalf("%q accepted but its range does not parse: %v", entry, err)
		}
		if port == 0 {
			port = 443
		}
		if err := g.CheckAddr("127.0.0.1", netip.AddrPortFrom(pfx.Addr(), port)); err == nil {
			t.Fatalf("%q: %s port %d allowed", entry, pfx.Addr(), port)
		}
	})
}
