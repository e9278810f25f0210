package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// The AllowPrivateHosts list: which hosts (or address ranges) may reach a
// private address, on which ports, and which socket addresses nothing may
// reach whatever the rest of the list says (the daemon's own listeners).
//
//	localhost            the host, any port (as written in the URL)
//	localhost:8080       the host, that port only ("[::1]:8080" for IPv6)
//	10.0.0.0/8           any allowed host whose address is in the range
//	10.0.0.0/8:5432      the same, that port only ("[fd00::/8]:5432")
//	!127.0.0.1:9464      never this address and port ("!10.0.0.0/8:22",
//	                     "![::1]:9464"; without a port, every port)
//
// A deny entry wins over everything, public addresses included; the others
// only ever open private ones (loopback, RFC 1918, CGNAT, benchmarking,
// unique-local): metadata, link-local and the other never-allowed classes
// stay refused whatever an entry says.

// privateRules is the parsed list.
type privateRules struct {
	hosts    map[string]portSet // normalised host names and canonical IP literals
	prefixes []prefixRule
	denied   []prefixRule
}

type prefixRule struct {
	prefix netip.Prefix
	ports  portSet
}

// maxPrivateEntries bounds the list (a person's config, plus the
// daemon's listeners).
const maxPrivateEntries = 1024

// CheckPrivateHosts validates an allow_private_hosts list as New would.
func CheckPrivateHosts(entries []string) error {
	_, err := parsePrivateRules(entries)
	return err
}

// DenyEntry is the AllowPrivateHosts entry that makes ap unreachable
// whatever else the list says: the daemon appends one per listener of its
// own (metrics, review page, MCP, egress proxy).
func DenyEntry(ap netip.AddrPort) string {
	return "!" + netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
}

func parsePrivateRules(entries []string) (privateRules, error) {
	r := privateRules{hosts: map[string]portSet{}}
	if len(entries) > maxPrivateEntries {
		return r, fmt.Errorf("network guard: %d private hosts, at most %d", len(entries), maxPrivateEntries)
	}
	for _, e := range entries {
		if err := r.add(e); err != nil {
			return r, fmt.Errorf("network guard: private host %q: %w", e, err)
		}
	}
	return r, nil
}

func (r *privateRules) add(entry string) error {
	e := strings.TrimSpace(entry)
	deny := strings.HasPrefix(e, "!")
	e = strings.TrimPrefix(e, "!")
	if strings.Contains(e, "://") {
		return errors.New("a scheme is not allowed, give the host only")
	}
	addr, port, err := splitPrivatePort(e)
	if err != nil {
		return err
	}
	if strings.Contains(addr, "/") || deny {
		pfx, err := parsePrefix(addr)
		if err != nil {
			if deny {
				return fmt.Errorf("a deny entry names an address or range (\"!127.0.0.1:9464\", \"!10.0.0.0/8\"): %w", err)
			}
			return err
		}
		list := &r.prefixes
		if deny {
			list = &r.denied
		}
		i := -1
		for j, p := range *list {
			if p.prefix == pfx {
				i = j
			}
		}
		if i < 0 {
			*list = append(*list, prefixRule{prefix: pfx})
			i = len(*list) - 1
		}
		(*list)[i].ports.add(port)
		return nil
	}
	if addr != e && strings.HasPrefix(e, "[") && !strings.HasPrefix(addr, "[") {
		addr = "[" + addr + "]" // "[::1]:8080": normalizePattern reads the brackets
	}
	host, _, err := normalizePattern(addr, false)
	if err != nil {
		return err
	}
	ps := r.hosts[host]
	ps.add(port)
	r.hosts[host] = ps
	return nil
}

// splitPrivatePort splits an entry's optional port off: "h:80",
// "[::1]:80", "[fd00::/8]:80", "10.0.0.0/8:80"; a bare IPv6 address or
// range ("::1", "fd00::/8") has none.
func splitPrivatePort(e string) (string, uint16, error) {
	if e == "" {
		return "", 0, errors.New("empty entry")
	}
	if strings.HasPrefix(e, "[") {
		i := strings.IndexByte(e, ']')
		if i < 0 {
			return "", 0, errors.New("unclosed [")
		}
		inner, rest := e[1:i], e[i+1:]
		if rest == "" {
			return inner, 0, nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", 0, fmt.Errorf("%q after ]: want :port", rest)
		}
		port, err := parsePort(rest[1:])
		return inner, port, err
	}
	if strings.Count(e, ":") != 1 {
		return e, 0, nil
	}
	i := strings.IndexByte(e, ':')
	port, err := parsePort(e[i+1:])
	return e[:i], port, err
}

// parsePrefix reads "10.0.0.0/8", "fd00::/8" or a single address (a /32
// or /128), canonical: no host bits set, no zone, no IPv4-mapped form.
func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address", s)
		}
		ip = ip.Unmap()
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an address range (10.0.0.0/8, fd00::/8)", s)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q: write IPv4 ranges as IPv4 (10.0.0.0/8)", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has bits set past its length: write %s", s, p.Masked())
	}
	return p, nil
}

// deniedAt reports whether a deny entry covers ip:port.
func (r *privateRules) deniedAt(ip netip.Addr, port uint16) bool {
	ip = ip.Unmap()
	for _, d := range r.denied {
		if d.prefix.Contains(ip) && d.ports.covers(port) {
			return true
		}
	}
	return false
}

// allows reports whether host (normalised) may reach the private address
// ip on port; port 0 asks about every port (only entries without one).
func (r *privateRules) allows(host string, ip netip.Addr, port uint16) bool {
	if ps, ok := r.hosts[host]; ok && ps.covers(port) {
		return true
	}
	ip = ip.Unmap()
	for _, p := range r.prefixes {
		if p.prefix.Contains(ip) && p.ports.covers(port) {
			return true
		}
	}
	return false
}

// named reports whether any entry names host or a range holding ip, at
// whatever port: for a refusal that says the port is the reason.
func (r *privateRules) named(host string, ip netip.Addr) bool {
	if _, ok := r.hosts[host]; ok {
		return true
	}
	ip = ip.Unmap()
	for _, p := range r.prefixes {
		if p.prefix.Contains(ip) {
			return true
		}
	}
	return false
}

func (r *privateRules) empty() bool {
	return len(r.hosts) == 0 && len(r.prefixes) == 0
}
