package netguard

// The network guard: which URLs and which socket addresses an HTTP tool (and
// later JS fetch) may reach. It is built to make three things impossible for
// a tool call, whatever URL it is handed:
//
//   - reaching a host outside the tool's allowlist, however the URL is spelt
//     (userinfo tricks, case, trailing dots, IDNA look-alikes, numeric IPv4
//     spellings, percent-encoding, backslashes, redirects);
//   - reaching a private, loopback, link-local or otherwise internal address,
//     including through DNS (a public name resolving to 127.0.0.1) and DNS
//     rebinding (a name resolving one way when checked and another when
//     dialled), and through IPv6 embeddings of IPv4 addresses;
//   - reaching a cloud metadata service, ever.
//
// The checks run twice: once on the URL (CheckURL, CheckRedirect) and once
// on the socket address actually being connected (DialContext, whose
// net.Dialer Control hook sees the final IP:port after DNS resolution). The
// second check is the one that holds; the first gives early, readable errors.
//
// Files: netguard.go (config, allowlist, URL checks), netguard_ip.go (the
// address classes), netguard_dial.go (dialer, transport, redirects, resolve).

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Config configures a Guard.
type Config struct {
	// AllowedDomains is the allowlist; it must not be empty. Each entry is
	// either an exact host ("api.example.com", "bücher.de", "93.184.216.34",
	// "2606:2800::1" or "[2606:2800::1]") or a wildcard "*.example.com".
	// A wildcard matches every sub-domain at any depth ("a.example.com",
	// "a.b.example.com") but NOT the apex "example.com": list both to allow
	// both. Wildcards over a public suffix ("*.com", "*.co.uk",
	// "*.github.io") and over IP addresses are refused. Entries are
	// lowercased and converted to ASCII with IDNA; schemes, paths,
	// userinfo and wildcards anywhere but the leading "*." are refused.
	// The entry "*" alone matches every host, names and IP literals: every
	// other check still applies (private, loopback, link-local and
	// metadata addresses are refused after DNS unless AllowPrivateHosts
	// names the host). Only the fetch toolset writes it; the tool kinds
	// refuse it in what an author writes.
	// An entry may name a port ("api.example.com:8443",
	// "[2606:2800::1]:8443", "*.example.com:8443"): then only that port.
	// Without one, the URL a tool's author wrote may use any port, but a
	// redirect must stay on the port the request started on (or move
	// between the default ports, http to https) unless the target's
	// host:port is listed (see CheckRedirect).
	AllowedDomains []string
	// AllowPrivateHosts names hosts, exactly as the URL spells them (after
	// the same normalisation), that may connect to loopback, RFC 1918,
	// CGNAT, benchmarking and IPv6 unique-local addresses. It is for local
	// development only and empty by default. "localhost" lets
	// http://localhost/ reach 127.0.0.1, and "127.0.0.1" lets the literal
	// http://127.0.0.1/ through ("::1" or "[::1]" for IPv6). An entry may
	// name a port ("localhost:8080", "[::1]:8080"): then only that port.
	// An address range ("10.0.0.0/8", "10.0.0.0/8:5432", "[fd00::/8]:80")
	// lets any allowed host reach the private addresses in it. An entry
	// "!ADDRESS[:PORT]" or "!RANGE[:PORT]" makes that socket address
	// unreachable whatever the list says, public or not: the daemon adds
	// one per listener of its own. A host must also be in AllowedDomains
	// to be reached at all. Wildcards are refused. Link-local, multicast,
	// reserved and cloud metadata addresses stay refused even for these
	// hosts. See netguard_private.go.
	AllowPrivateHosts []string
	// Resolver resolves host names for DialContext and CheckURLWithResolve.
	// Nil means a pure-Go resolver (&net.Resolver{PreferGo: true}), the
	// same one a static executor binary uses.
	Resolver *net.Resolver
}

// AnyHost is the allowlist entry that matches every host.
const AnyHost = "*"

// AllowsAnyHost reports whether domains holds the entry "*".
func AllowsAnyHost(domains []string) bool {
	for _, d := range domains {
		if strings.TrimSpace(d) == AnyHost {
			return true
		}
	}
	return false
}

// Guard checks URLs and socket addresses against one allowlist. It is
// safe for concurrent use and cheap to keep.
type Guard struct {
	exact     map[string]portSet // normalised host names and canonical IP literals
	wildcards []wildcard         // ".example.com" for "*.example.com"
	anyHost   bool               // the entry "*"
	private   privateRules       // parsed AllowPrivateHosts
	resolver  *net.Resolver
}

// portSet is the ports an allowlist entry covers: any, or those listed.
type portSet struct {
	any    bool
	listed []uint16
}

func (p *portSet) add(port uint16) {
	if port == 0 {
		p.any = true
	} else if !slices.Contains(p.listed, port) {
		p.listed = append(p.listed, port)
	}
}

// covers reports whether port is allowed; listed whether it is named.
func (p portSet) covers(port uint16) bool { return p.any || p.names(port) }

// names reports whether port was listed explicitly.
func (p portSet) names(port uint16) bool { return slices.Contains(p.listed, port) }

type wildcard struct {
	suffix string
	ports  portSet
}

// DeniedError is a refusal by the network guard. URL is what was refused
// (a URL with its userinfo and query redacted, or a host:port for a dial);
// Reason says why.
type DeniedError struct {
	URL    string
	Reason string
}

func (e *DeniedError) Error() string {
	return "network guard refused " + e.URL + ": " + e.Reason
}

// New validates cfg and returns a guard for it.
func New(cfg Config) (*Guard, error) {
	if len(cfg.AllowedDomains) == 0 {
		return nil, errors.New("network guard: allowed domains must not be empty")
	}
	g := &Guard{
		exact:    make(map[string]portSet, len(cfg.AllowedDomains)),
		resolver: cfg.Resolver,
	}
	if g.resolver == nil {
		g.resolver = &net.Resolver{PreferGo: true}
	}
	for _, p := range cfg.AllowedDomains {
		if strings.TrimSpace(p) == AnyHost {
			g.anyHost = true
			continue
		}
		entry, port, err := splitEntryPort(p)
		if err != nil {
			return nil, fmt.Errorf("network guard: allowed domain %q: %w", p, err)
		}
		host, wild, err := normalizePattern(entry, true)
		if err != nil {
			return nil, fmt.Errorf("network guard: allowed domain %q: %w", p, err)
		}
		if wild {
			i := slices.IndexFunc(g.wildcards, func(w wildcard) bool { return w.suffix == "."+host })
			if i < 0 {
				g.wildcards = append(g.wildcards, wildcard{suffix: "." + host})
				i = len(g.wildcards) - 1
			}
			g.wildcards[i].ports.add(port)
		} else {
			ps := g.exact[host]
			ps.add(port)
			g.exact[host] = ps
		}
	}
	var err error
	if g.private, err = parsePrivateRules(cfg.AllowPrivateHosts); err != nil {
		return nil, err
	}
	return g, nil
}

// maxURLBytes bounds the URLs CheckURL looks at.
const maxURLBytes = 64 << 10

// CheckURL parses rawURL exactly as net/http does (url.Parse) and checks it:
// the scheme is http or https; there is a host and no userinfo; the host's
// authority has no backslash or percent-encoding; the host, normalised
// (lowercase, one trailing dot removed, IDNA to ASCII as net/http does it),
// is an ordinary DNS name or a canonical IP literal (numeric spellings such
// as "2130706433", "0x7f.1", "017700000001" or "127.1" are refused); it is
// in the allowlist; and any explicit port is 1-65535. An IP-literal host
// must itself be in the allowlist and be a public address (or a private one
// named in AllowPrivateHosts). It returns the parsed URL, which the caller
// should use as is. Names are not resolved here: DialContext checks the
// addresses they resolve to, and CheckURLWithResolve does so up front.
func (g *Guard) CheckURL(rawURL string) (*url.URL, error) {
	return g.checkURL(rawURL, false)
}

func (g *Guard) checkURL(rawURL string, deferPrivate bool) (*url.URL, error) {
	if len(rawURL) > maxURLBytes {
		return nil, &DeniedError{URL: redactURL(rawURL), Reason: fmt.Sprintf("URL is longer than %d bytes", maxURLBytes)}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &DeniedError{URL: redactURL(rawURL), Reason: "URL does not parse: " + err.Error()}
	}
	if reason := checkRawAuthority(rawURL, u.Scheme); reason != "" {
		return nil, &DeniedError{URL: redactURL(rawURL), Reason: reason}
	}
	if err := g.checkParsedURL(u, deferPrivate); err != nil {
		return nil, err
	}
	return u, nil
}

// CheckAuthoredURL checks a URL as a tool's author wrote it, where the
// daemon's allow_private_hosts is not known (a definition being created):
// as CheckURL, except that an IP literal of a class only that list can
// allow (loopback, RFC 1918…) passes, as a host name resolving there does.
// The call's own guard decides both when it dials. Never use it for a URL
// about to be fetched.
func (g *Guard) CheckAuthoredURL(rawURL string) (*url.URL, error) {
	return g.checkURL(rawURL, true)
}

// checkRawAuthority looks at the text net/url parsed the authority from: the
// characters it decodes or tolerates there are refused outright, so that the
// host checked is the host as written. Backslashes are refused anywhere
// before the query, since browsers and WHATWG parsers read them as slashes.
func checkRawAuthority(raw, scheme string) string {
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if strings.IndexByte(raw, '\\') >= 0 {
		return "URL contains a backslash"
	}
	if len(raw) <= len(scheme) || raw[len(scheme)] != ':' {
		return "URL has no scheme"
	}
	rest := raw[len(scheme)+1:]
	if !strings.HasPrefix(rest, "//") {
		return "URL has no host"
	}
	authority := rest[2:]
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority = authority[:i]
	}
	if strings.IndexByte(authority, '%') >= 0 {
		return "host is percent-encoded"
	}
	return ""
}

// checkParsedURL checks an already parsed URL: the fields net/http uses to
// decide where to connect.
func (g *Guard) checkParsedURL(u *url.URL, deferPrivate bool) error {
	deny := func(format string, args ...any) error {
		return &DeniedError{URL: redactParsedURL(u), Reason: fmt.Sprintf(format, args...)}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return deny("URL has no scheme (http or https required)")
		}
		return deny("scheme %q is not allowed (http or https only)", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return deny("URL has no host")
	}
	if u.User != nil {
		return deny("URL carries userinfo (user@ or user:password@)")
	}
	port, err := effectivePort(u)
	if err != nil {
		return deny("%v", err)
	}
	host, ip, err := normalizeHost(u.Hostname())
	if err != nil {
		return deny("%v", err)
	}
	if !g.allowed(host, ip, port) {
		if g.allowed(host, ip, 0) {
			return deny("port %d of host %q is not in the allowed domains", port, host)
		}
		return deny("host %q is not in the allowed domains", host)
	}
	if ip.IsValid() {
		if class, _ := classifyIP(ip); class == ipPrivate && deferPrivate {
			return nil
		}
		if reason := g.ipRefusal(host, ip, port); reason != "" {
			return deny("%s", reason)
		}
	}
	return nil
}

// effectivePort is the URL's port, or its scheme's default.
func effectivePort(u *url.URL) (uint16, error) {
	if p := u.Port(); p != "" {
		return parsePort(p)
	}
	if u.Scheme == "https" {
		return 443, nil
	}
	return 80, nil
}

// splitEntryPort splits an allowlist entry's optional port off: "h:443",
// "[::1]:443" and "*.h:443" name one; a bare IPv6 literal does not.
func splitEntryPort(p string) (string, uint16, error) {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "[") {
		if i := strings.Index(p, "]:"); i >= 0 {
			port, err := parsePort(p[i+2:])
			return p[:i+1], port, err
		}
		return p, 0, nil
	}
	if strings.Count(p, ":") != 1 {
		return p, 0, nil
	}
	i := strings.IndexByte(p, ':')
	port, err := parsePort(p[i+1:])
	return p[:i], port, err
}

// allowed reports whether a normalised host is in the allowlist. IP
// literals match exact entries only.
// A port of 0 asks whether any entry names the host at all.
func (g *Guard) allowed(host string, ip netip.Addr, port uint16) bool {
	return g.match(host, ip, func(ps portSet) bool { return port == 0 || ps.covers(port) })
}

// listed reports whether an entry names host with exactly this port.
func (g *Guard) listed(host string, ip netip.Addr, port uint16) bool {
	return g.match(host, ip, func(ps portSet) bool { return ps.names(port) })
}

func (g *Guard) match(host string, ip netip.Addr, ok func(portSet) bool) bool {
	if g.anyHost && ok(portSet{any: true}) {
		return true
	}
	if ps, found := g.exact[host]; found && ok(ps) {
		return true
	}
	if ip.IsValid() {
		return false
	}
	for _, w := range g.wildcards {
		if strings.HasSuffix(host, w.suffix) && ok(w.ports) {
			return true
		}
	}
	return false
}

// parsePort parses a decimal port, 1-65535.
func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q is not a valid port (1-65535)", s)
	}
	return uint16(n), nil
}

// normalizePattern normalises an AllowedDomains (wildOK) or
// AllowPrivateHosts entry. It returns the host without the "*." of a
// wildcard and whether it was one.
func normalizePattern(p string, wildOK bool) (string, bool, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", false, errors.New("empty entry")
	}
	if strings.Contains(p, "://") {
		return "", false, errors.New("a scheme is not allowed, give the host only")
	}
	if strings.HasPrefix(p, "[") && strings.HasSuffix(p, "]") {
		ip, err := netip.ParseAddr(p[1 : len(p)-1])
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", false, errors.New("not a valid IPv6 literal")
		}
		return ip.String(), false, nil
	}
	if strings.ContainsAny(p, "/?#@\\%") {
		return "", false, errors.New("only a host is allowed (no path, query, userinfo or escapes)")
	}
	wild := false
	if strings.HasPrefix(p, "*.") {
		if !wildOK {
			return "", false, errors.New("wildcards are not allowed here")
		}
		wild, p = true, p[2:]
	}
	if strings.Contains(p, "*") {
		return "", false, errors.New(`a wildcard must be a leading "*." label`)
	}
	if strings.Contains(p, ":") {
		ip, err := netip.ParseAddr(p)
		if err != nil || ip.Zone() != "" {
			return "", false, errors.New("a port is not allowed, give the host only")
		}
		if wild {
			return "", false, errors.New("a wildcard cannot cover an IP address")
		}
		return ip.String(), false, nil
	}
	host, ip, err := normalizeHost(p)
	if err != nil {
		return "", false, err
	}
	if wild {
		if ip.IsValid() {
			return "", false, errors.New("a wildcard cannot cover an IP address")
		}
		if ps, _ := publicsuffix.PublicSuffix(host); ps == host {
			return "", false, fmt.Errorf("%q is a public suffix: a wildcard over it would allow anyone's domain", host)
		}
	}
	return host, wild, nil
}

// Host name limits (RFC 1035).
const (
	maxHostBytes  = 253
	maxLabelBytes = 63
)

// normalizeHost normalises a host as it appears in a URL (without brackets
// or port) or in a dial address, to the form the allowlist holds. It
// returns the IP address too when the host is an IP literal; the host of
// an IP literal is its canonical text. It refuses anything that is not a
// plain DNS name or a canonical IP literal, so that every resolver and every
// URL parser agree on what it names.
func normalizeHost(h string) (string, netip.Addr, error) {
	if h == "" {
		return "", netip.Addr{}, errors.New("empty host")
	}
	if strings.IndexByte(h, ':') >= 0 {
		ip, err := netip.ParseAddr(h)
		if err != nil {
			return "", netip.Addr{}, fmt.Errorf("host %s is not a valid IPv6 address", strconv.Quote(h))
		}
		if ip.Zone() != "" {
			return "", netip.Addr{}, errors.New("IPv6 zones are not allowed")
		}
		return ip.String(), ip, nil
	}
	if strings.IndexByte(h, '%') >= 0 {
		return "", netip.Addr{}, errors.New("host is percent-encoded")
	}
	if !isASCII(h) {
		if !utf8.ValidString(h) {
			return "", netip.Addr{}, errors.New("host is not valid UTF-8")
		}
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", netip.Addr{}, fmt.Errorf("host %s is not a valid internationalised name", strconv.Quote(h))
		}
		h = a
	}
	h = strings.ToLower(h)
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", netip.Addr{}, errors.New("empty host")
	}
	if len(h) > maxHostBytes {
		return "", netip.Addr{}, fmt.Errorf("host name is longer than %d bytes", maxHostBytes)
	}
	label := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c == '.':
			if label == 0 {
				return "", netip.Addr{}, fmt.Errorf("host %s has an empty label", strconv.Quote(h))
			}
			label = 0
			continue
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return "", netip.Addr{}, fmt.Errorf("host %s has a character not allowed in a host name", strconv.Quote(h))
		}
		label++
		if label > maxLabelBytes {
			return "", netip.Addr{}, fmt.Errorf("host %s has a label longer than %d bytes", strconv.Quote(h), maxLabelBytes)
		}
	}
	if label == 0 {
		return "", netip.Addr{}, fmt.Errorf("host %s has an empty label", strconv.Quote(h))
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if NumericLabel(last) {
		// A name ending in a number is an IPv4 address to URL parsers
		// and to inet_aton: only the canonical dotted-quad is accepted.
		ip, err := netip.ParseAddr(h)
		if err != nil || !ip.Is4() {
			return "", netip.Addr{}, fmt.Errorf("host %s is a non-canonical numeric IPv4 address (use dotted-decimal a.b.c.d)", strconv.Quote(h))
		}
		return ip.String(), ip, nil
	}
	return h, netip.Addr{}, nil
}

// NumericLabel reports whether a host-name label would be read as a number
// by an IPv4 parser (inet_aton): all decimal digits, or "0x" (any case)
// followed by hex digits (or nothing). The deny rules read addresses
// written in commands with it too (policy/shellguard).
func NumericLabel(l string) bool {
	if l == "" {
		return false
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		for i := 2; i < len(l); i++ {
			c := l[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// maxShownURL bounds the URL text kept in a DeniedError.
const maxShownURL = 256

// RedactURL returns a form of raw that is safe to show in an error or a
// log line: the userinfo and the query (either may carry credentials)
// replaced by "redacted", the fragment dropped, control and non-ASCII
// characters quoted, and long URLs cut. DeniedError.URL is built with it.
func RedactURL(raw string) string { return redactURL(raw) }

// redactURL is RedactURL.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return redactParsedURL(u)
	}
	// Unparseable: drop the query and fragment, and the userinfo if the
	// authority seems to have one.
	cut := false
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw, cut = raw[:i], true
	}
	if i := strings.Index(raw, "//"); i >= 0 {
		auth := raw[i+2:]
		if j := strings.IndexByte(auth, '/'); j >= 0 {
			auth = auth[:j]
		}
		if k := strings.LastIndexByte(auth, '@'); k >= 0 {
			raw = raw[:i+2] + "redacted" + raw[i+2+k:]
		}
	}
	if cut {
		raw += "?redacted"
	}
	return shown(raw)
}

func redactParsedURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User("redacted")
	}
	if c.RawQuery != "" || c.ForceQuery {
		c.RawQuery, c.ForceQuery = "redacted", false
	}
	c.Fragment, c.RawFragment = "", ""
	return shown(c.String())
}

// shown cuts s to maxShownURL bytes and quotes it if it holds anything but
// printable ASCII.
func shown(s string) string {
	if len(s) > maxShownURL {
		s = s[:maxShownURL] + "..."
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] >= 0x7f {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}
