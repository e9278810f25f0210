package netguard

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// Red-team tables (branch redteam): the cloud metadata endpoints in every
// spelling a URL may carry, names and DNS answers that lead there, and
// redirects to them. Each must be refused whatever the allowlist says;
// look-alikes that are ordinary public addresses must pass.

// metadataURLSpellings spell metadata endpoints in URL hosts.
var metadataURLSpellings = []string{
	"http://169.254.169.254/latest/meta-data/",
	"http://169.254.169.254./latest/",
	"http://169.254.169.254:80/",
	"https://169.254.169.254/",
	"HTTP://169.254.169.254/",
	"http://2852039166/",
	"http://0xa9fea9fe/",
	"http://0xA9FEA9FE/",
	"http://0x00a9fea9fe/",
	"http://025177524776/",
	"http://0251.0376.0251.0376/",
	"http://0251.254.169.254/",
	"http://169.0376.169.254/",
	"http://0xa9.254.0xa9.0xfe/",
	"http://0xa9.0xfe.0xa9.0xfe/",
	"http://169.254.43518/",
	"http://169.16689662/",
	"http://0xa9.0xfea9fe/",
	"http://00169.254.169.254/",
	"http://169.254.169.254.5/",
	"http://[::ffff:169.254.169.254]/",
	"http://[::ffff:a9fe:a9fe]/",
	"http://[::FFFF:A9FE:A9FE]/",
	"http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
	"http://[0000:0000:0000:0000:0000:ffff:a9fe:a9fe]/",
	"http://[::a9fe:a9fe]/",
	"http://[::169.254.169.254]/",
	"http://[64:ff9b::a9fe:a9fe]/",
	"http://[64:ff9b::169.254.169.254]/",
	"http://[::ffff:0:a9fe:a9fe]/",
	"http://[2002:a9fe:a9fe::]/",
	"http://[2001:0:a9fe:a9fe::]/",
	"http://[2001:0:4136:e378:8000:63bf:5601:5601]/", // Teredo client 169.254.169.254 (inverted)
	"http://[fd00:ec2::254]/latest/",
	"http://[fd00:ec2:0:0:0:0:0:254]/",
	"http://[fd00:0ec2::254]/",
	"http://[FD00:EC2::254]/",
	"http://[fd00:ec2::254%25eth0]/",
	"http://[fd00:ec2::23]/v1/credentials",
	"http://[fd20:ce::254]/computeMetadata/v1/",
	"http://[fd00:c1::a9fe:a9fe]/opc/v2/",
	"http://169.254.170.2/v2/credentials",
	"http://169.254.170.23/v1/credentials",
	"http://169.254.0.23/",
	"http://100.100.100.200/latest/meta-data/",
	"http://168.63.129.16/machine?comp=goalstate",
	"http://192.0.0.192/",
	"http://allowed.example.com@169.254.169.254/",
	"http://user:pw@169.254.169.254/",
	"http://169.254.169.254%2f@example.com/",
	"http://169.254.169.254%2eexample.com/",
	"http://%31%36%39.254.169.254/",
	"http://169.254.169.254\\@example.com/",
	"http://１６９．２５４．１６９．２５４/",
	"http://169。254。169。254/",
	"http://①⑥⑨.②⑤④.①⑥⑨.②⑤④/",
	"http://169.254.169.254 /",
	"http://169.254.169.254\t/",
}

// TestRedTeamMetadataURLs: with every host allowed, and with the
// endpoints' own addresses on the allowlist, no spelling gets through.
func TestRedTeamMetadataURLs(t *testing.T) {
	anyHost := mustGuard(t, Config{AllowedDomains: []string{"*"}})
	listed := mustGuard(t, Config{
		AllowedDomains:    []string{"169.254.169.254", "[fd00:ec2::254]", "100.100.100.200", "example.com", "allowed.example.com"},
		AllowPrivateHosts: []string{"169.254.169.254", "fd00:ec2::254", "100.100.100.200"},
	})
	for _, u := range metadataURLSpellings {
		for name, g := range map[string]*Guard{"any host": anyHost, "listed": listed} {
			if _, err := g.CheckURL(u); err == nil {
				t.Errorf("%s: CheckURL(%q) allowed", name, u)
			}
			if _, err := g.CheckAuthoredURL(u); err == nil {
				t.Errorf("%s: CheckAuthoredURL(%q) allowed", name, u)
			}
		}
	}
	// Look-alikes: public addresses that share digits with the endpoints.
	for _, u := range []string{"http://169.254.169.25.example.com/", "http://93.184.216.34/", "http://[2606:4700::1111]/", "http://example.com/169.254.169.254", "http://example.com/?u=http://169.254.169.254/"} {
		if _, err := anyHost.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want allowed", u, err)
		}
	}
}

// TestRedTeamMetadataEndpoint covers the exported classifier other guards
// (the shell rules) share: every address of the list, in every IPv6
// wrapping, and ordinary addresses next to them.
func TestRedTeamMetadataEndpoint(t *testing.T) {
	for _, s := range []string{
		"169.254.169.254", "169.254.170.2", "169.254.170.23", "169.254.0.23", "100.100.100.200", "168.63.129.16",
		"192.0.0.192", "fd00:ec2::254", "fd00:ec2::23", "fd00:ec2::1", "fd20:ce::254", "fd00:c1::a9fe:a9fe",
		"::ffff:169.254.169.254", "::a9fe:a9fe", "64:ff9b::a9fe:a9fe", "::ffff:0:a9fe:a9fe", "2002:a9fe:a9fe::1",
		"2001:0:a9fe:a9fe::", "2001:0:4136:e378:8000:63bf:5601:5601", "::ffff:6464:64c8", "64:ff9b::a83f:8110",
		"fd00:ec2::254%eth0",
	} {
		if _, ok := MetadataEndpoint(netip.MustParseAddr(s)); !ok {
			t.Errorf("MetadataEndpoint(%s) = false", s)
		}
	}
	for _, s := range []string{
		"169.254.169.253", "169.254.169.255", "100.100.100.201", "8.8.8.8", "::1", "fd00:ec3::254", "2606:4700::1111",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "fe80::1",
	} {
		if name, ok := MetadataEndpoint(netip.MustParseAddr(s)); ok {
			t.Errorf("MetadataEndpoint(%s) = %q", s, name)
		}
	}
}

// TestRedTeamMetadataByName: names that resolve to a metadata endpoint (a
// wildcard DNS service, a provider's own name, an AAAA answer wrapping the
// IPv4 address) are refused when dialled, for every host and even when the
// name is a private host.
func TestRedTeamMetadataByName(t *testing.T) {
	srv := newCountingServer(t, nil)
	dns := staticDNS(t, map[string][]string{
		"169.254.169.254.nip.io":   {"169.254.169.254"},
		"169-254-169-254.sslip.io": {"169.254.169.254"},
		"metadata.google.internal": {"169.254.169.254"},
		"metadata":                 {"169.254.169.254"},
		"instance-data":            {"169.254.169.254"},
		"ecs.test":                 {"169.254.170.2"},
		"alibaba.test":             {"100.100.100.200"},
		"wire.test":                {"168.63.129.16"},
		"mapped.test":              {"::ffff:169.254.169.254"},
		"nat64.test":               {"64:ff9b::a9fe:a9fe"},
		"v6meta.test":              {"fd00:ec2::254"},
		"mixed.test":               {"93.184.216.34", "169.254.169.254"},
	})
	g := mustGuard(t, Config{
		AllowedDomains:    []string{"*"},
		AllowPrivateHosts: []string{"metadata", "metadata.google.internal", "mapped.test", "v6meta.test"},
		Resolver:          dns.resolver(),
	})
	for _, host := range []string{"169.254.169.254.nip.io", "169-254-169-254.sslip.io", "metadata.google.internal", "metadata.google.internal.", "METADATA.Google.Internal", "metadata", "instance-data", "ecs.test", "alibaba.test", "wire.test", "mapped.test", "nat64.test", "v6meta.test", "mixed.test"} {
		_, err := get(t, g, "http://"+host+":"+srv.port()+"/latest/meta-data/")
		wantDenied(t, err, host)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server got %d requests", n)
	}
}

// TestRedTeamRedirectToMetadata: an allowed API answering with a redirect
// to any spelling of a metadata endpoint is not followed.
func TestRedTeamRedirectToMetadata(t *testing.T) {
	var loc atomic.Value
	origin := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loc.Load().(string), http.StatusFound)
	})
	dns := staticDNS(t, map[string][]string{
		"api.test":                 {"127.0.0.1"},
		"metadata.google.internal": {"169.254.169.254"},
		"rebind.test":              {"169.254.169.254"},
	})
	g := mustGuard(t, Config{AllowedDomains: []string{"*"}, AllowPrivateHosts: []string{"api.test"}, Resolver: dns.resolver()})
	targets := append([]string{
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://rebind.test/",
		"//169.254.169.254/latest/",
	}, metadataURLSpellings...)
	for _, to := range targets {
		if strings.ContainsAny(to, " \t") {
			continue // not a Location a server can send
		}
		loc.Store(to)
		_, err := get(t, g, "http://api.test:"+origin.port()+"/start")
		var nd *DeniedError
		switch {
		case err == nil:
			t.Errorf("redirect to %q followed", to)
		case errors.As(err, &nd), strings.Contains(err.Error(), "failed to parse Location header"):
			// Refused by the guard, or not a URL the client follows.
		default:
			t.Errorf("redirect to %q: %v, want a refusal", to, err)
		}
	}
}
