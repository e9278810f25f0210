package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Transport and dialer settings.
const (
	// MaxRedirects is how many redirects a guarded client follows.
	MaxRedirects = 5

	dialTimeout         = 10 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 30 * time.Second
	maxResponseHeader   = 64 << 10
)

// DialContext connects to addr ("host:port", as http.Transport passes it:
// the URL's host, IDNA-converted, and port) for a guarded client. It
//
//  1. refuses networks other than tcp, tcp4 and tcp6;
//  2. normalises the host exactly as CheckURL does and checks it against
//     the allowlist again (so a Transport used without CheckURL is still
//     confined to the allowlist);
//  3. resolves a host name itself, with the configured resolver (see
//     lookup for search domains), and refuses the dial
//     if ANY resolved address is refused by CheckIP: a name that points
//     at internal addresses at all is not dialled;
//  4. dials the checked IP addresses themselves, one after another, never
//     the name, so no second look-up can happen between check and use;
//  5. and checks again, in the net.Dialer's Control hook, the socket
//     address actually being connected, with the URL host (captured by
//     the hook) deciding AllowPrivateHosts.
//
// Step 5 is the one that holds whatever happens before it: the kernel
// connects to exactly the address the hook approved. Refusals are
// *DeniedError, possibly wrapped in a *net.OpError.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	deny := func(format string, args ...any) error {
		return &DeniedError{URL: shown(addr), Reason: fmt.Sprintf(format, args...)}
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, deny("network %q is not allowed (tcp only)", network)
	}
	rawHost, rawPort, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, deny("not a host:port address")
	}
	port, err := parsePort(rawPort)
	if err != nil {
		return nil, deny("%v", err)
	}
	host, ip, err := normalizeHost(rawHost)
	if err != nil {
		return nil, deny("%v", err)
	}
	if !g.allowed(host, ip, port) {
		return nil, deny("host %q port %d is not in the allowed domains", host, port)
	}
	addrs := []netip.Addr{ip}
	if !ip.IsValid() {
		if addrs, err = g.lookup(ctx, host); err != nil {
			return nil, err
		}
	}
	candidates := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if reason := g.ipRefusal(host, a, port); reason != "" {
			return nil, deny("%s", reason)
		}
		a = a.Unmap()
		if network == "tcp4" && !a.Is4() || network == "tcp6" && a.Is4() {
			continue
		}
		candidates = append(candidates, a)
	}
	if len(candidates) == 0 {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.AddrError{Err: "no suitable address found", Addr: host}}
	}
	d := g.dialer(host, rawPort)
	var firstErr error
	for _, a := range candidates {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, port).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		var nd *DeniedError
		if errors.As(err, &nd) || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, firstErr
}

// dialer returns a net.Dialer whose Control hook checks the socket address
// being connected, on behalf of host (the normalised URL host).
func (g *Guard) dialer(host, port string) *net.Dialer {
	return &net.Dialer{
		Timeout:   dialTimeout,
		KeepAlive: 30 * time.Second,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			return g.controlCheck(host, port, address)
		},
	}
}

// controlCheck is the Control hook's check: address is the "ip:port" the
// socket is about to connect to.
func (g *Guard) controlCheck(host, port, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &DeniedError{URL: shown(net.JoinHostPort(host, port)), Reason: fmt.Sprintf("socket address %s is not an IP address", shown(address))}
	}
	if reason := g.ipRefusal(host, ap.Addr(), ap.Port()); reason != "" {
		return &DeniedError{URL: shown(net.JoinHostPort(host, port)), Reason: reason}
	}
	return nil
}

// lookup resolves a normalised host name. A name with a dot is resolved as
// an absolute name ("api.example.com."), so resolv.conf search domains
// (Kubernetes' ndots:5) never turn it into another name; the hosts file
// still applies. A single-label name ("localhost", a compose service) is
// resolved as is, since the Go resolver finds those in the hosts file only
// without the dot. Either way every address is checked.
func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	name := host
	if strings.IndexByte(host, '.') >= 0 {
		name += "."
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// CheckURLWithResolve is CheckURL followed by a look-up of the host, every
// address checked as DialContext would check it. It fetches nothing; it is
// what `toolcage policy url` runs. It returns the parsed URL and the
// addresses the host resolves to (the address itself for an IP literal).
// A refusal is a *DeniedError; a failed look-up is returned as is.
// Passing here does not make a later fetch safe on its own account (the
// name may resolve differently then): DialContext checks again.
func (g *Guard) CheckURLWithResolve(ctx context.Context, rawURL string) (*url.URL, []netip.Addr, error) {
	u, err := g.CheckURL(rawURL)
	if err != nil {
		return nil, nil, err
	}
	host, ip, err := normalizeHost(u.Hostname())
	if err != nil { // CheckURL normalised it already
		return nil, nil, &DeniedError{URL: redactParsedURL(u), Reason: err.Error()}
	}
	if ip.IsValid() {
		return u, []netip.Addr{ip}, nil
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, nil, err
	}
	port, _ := effectivePort(u) // CheckURL checked it
	for _, a := range addrs {
		if reason := g.ipRefusal(host, a, port); reason != "" {
			return nil, addrs, &DeniedError{URL: redactParsedURL(u), Reason: fmt.Sprintf("host %q resolves to a refused address: %s", host, reason)}
		}
	}
	return u, addrs, nil
}

// CheckRedirect is an http.Client CheckRedirect hook: at most MaxRedirects
// redirects, no https-to-http downgrade anywhere along the chain, every
// target checked like a new URL (allowlist included), and on the port the
// chain started on (see CheckPortMove). Refusals are *DeniedError, which
// http.Client returns wrapped in a *url.Error.
func (g *Guard) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return &DeniedError{URL: redactParsedURL(req.URL), Reason: fmt.Sprintf("more than %d redirects", MaxRedirects)}
	}
	if req.URL.Scheme != "https" {
		for _, v := range via {
			if v.URL.Scheme == "https" {
				return &DeniedError{URL: redactParsedURL(req.URL), Reason: "redirect from https to http (downgrade)"}
			}
		}
	}
	// The parsed URL is what the client will use; its text form is checked
	// too, so that the target passes the same text checks a fresh URL does.
	if err := g.checkParsedURL(req.URL, false); err != nil {
		return err
	}
	if _, err := g.CheckURL(req.URL.String()); err != nil {
		return err
	}
	if len(via) > 0 {
		return g.CheckPortMove(via[0].URL, req.URL)
	}
	return nil
}

// CheckPortMove checks that a request following first (a redirect, or a
// follow-up the egress proxy relays) stays where the allowlist lets the
// chain go: on first's port, between the default ports (http to https), or
// to a host:port an allowlist entry names. An entry without a port lets an
// author's URL use any port; it does not let a server bounce a call to
// another service on the same host.
func (g *Guard) CheckPortMove(first, next *url.URL) error {
	from, err1 := effectivePort(first)
	to, err2 := effectivePort(next)
	if err1 != nil || err2 != nil {
		return &DeniedError{URL: redactParsedURL(next), Reason: "bad port"}
	}
	if from == to || (first.Port() == "" && next.Port() == "") {
		return nil
	}
	host, ip, err := normalizeHost(next.Hostname())
	if err == nil && g.listed(host, ip, to) {
		return nil
	}
	return &DeniedError{URL: redactParsedURL(next), Reason: fmt.Sprintf("redirect moves from port %d to port %d, which no allowed_domains entry names (add %q)", from, to, net.JoinHostPort(host, strconv.Itoa(int(to))))}
}

// Transport returns a new http.Transport that connects only through
// DialContext: environment proxies are ignored (Proxy is nil), HTTP/2 is
// spoken over TLS only (never cleartext h2c), TLS is 1.2 or later, and
// dial, TLS handshake and idle connections are bounded. It sets no overall
// request deadline: callers bound each request with its context.
func (g *Guard) Transport() *http.Transport {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		Protocols:              &protocols,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        idleConnTimeout,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    4,
		MaxResponseHeaderBytes: maxResponseHeader,
	}
}

// Client returns an http.Client with Transport() and CheckRedirect, no
// cookie jar and no timeout of its own (bound requests with their context).
func (g *Guard) Client() *http.Client {
	return &http.Client{Transport: g.Transport(), CheckRedirect: g.CheckRedirect}
}
