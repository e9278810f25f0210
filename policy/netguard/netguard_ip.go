package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// ipClass is what the guard makes of one address.
type ipClass uint8

const (
	// ipPublic addresses are allowed.
	ipPublic ipClass = iota
	// ipPrivate addresses (loopback, RFC 1918, CGNAT, benchmarking, IPv6
	// unique-local and site-local) are refused unless the host is in
	// AllowPrivateHosts.
	ipPrivate
	// ipForbidden addresses (cloud metadata, link-local, multicast,
	// unspecified, broadcast, reserved, documentation, and IPv6 transition
	// embeddings of non-public IPv4 addresses) are refused for every host.
	ipForbidden
)

// ipRange is one row of the address tables. The first matching row wins.
type ipRange struct {
	prefix netip.Prefix
	class  ipClass
	name   string
}

// metadataAddrs are cloud metadata and platform endpoints: refused for
// every host, AllowPrivateHosts or not, and also when embedded in an IPv6
// address (the classifier unwraps embeddings and looks again). Most of them
// sit in ranges refused anyway; naming them gives a clear message and keeps
// them refused should a range ever be opened up.
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"):    "the cloud metadata service (AWS, GCP, Azure, OCI, OpenStack, DigitalOcean and others)",
	netip.MustParseAddr("169.254.170.2"):      "the AWS ECS task metadata and credentials endpoint",
	netip.MustParseAddr("169.254.170.23"):     "the AWS EKS Pod Identity credentials endpoint",
	netip.MustParseAddr("169.254.0.23"):       "the Tencent Cloud metadata service",
	netip.MustParseAddr("100.100.100.200"):    "the Alibaba Cloud metadata service",
	netip.MustParseAddr("168.63.129.16"):      "the Azure WireServer platform endpoint",
	netip.MustParseAddr("192.0.0.192"):        "the Oracle Cloud metadata service",
	netip.MustParseAddr("fd00:ec2::254"):      "the AWS instance metadata service (IPv6)",
	netip.MustParseAddr("fd00:ec2::23"):       "the AWS EKS Pod Identity credentials endpoint (IPv6)",
	netip.MustParseAddr("fd20:ce::254"):       "the GCP metadata service (IPv6)",
	netip.MustParseAddr("fd00:c1::a9fe:a9fe"): "the Oracle Cloud metadata service (IPv6)",
}

// metadataPrefixes are whole blocks reserved for cloud platform services.
var metadataPrefixes = []ipRange{
	{netip.MustParsePrefix("fd00:ec2::/32"), ipForbidden, "in the AWS platform services block fd00:ec2::/32 (metadata, DNS, NTP)"},
}

// v4Ranges classifies IPv4 addresses (IANA special-purpose registry).
var v4Ranges = []ipRange{
	{netip.MustParsePrefix("0.0.0.0/32"), ipForbidden, "unspecified (0.0.0.0)"},
	{netip.MustParsePrefix("0.0.0.0/8"), ipForbidden, `in the "this network" block 0.0.0.0/8`},
	{netip.MustParsePrefix("10.0.0.0/8"), ipPrivate, "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), ipPrivate, "shared carrier-grade NAT space (100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), ipPrivate, "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), ipForbidden, "link-local (169.254.0.0/16, where cloud metadata services live)"},
	{netip.MustParsePrefix("172.16.0.0/12"), ipPrivate, "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), ipForbidden, "in the IETF protocol assignments block 192.0.0.0/24"},
	{netip.MustParsePrefix("192.0.2.0/24"), ipForbidden, "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), ipForbidden, "in the deprecated 6to4 relay anycast block"},
	{netip.MustParsePrefix("192.168.0.0/16"), ipPrivate, "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), ipPrivate, "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), ipForbidden, "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), ipForbidden, "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), ipForbidden, "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), ipForbidden, "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), ipForbidden, "reserved (240.0.0.0/4)"},
}

// v6Ranges classifies native IPv6 addresses, after the embeddings of IPv4
// addresses have been unwrapped. Anything outside 2000::/3 that no row
// names is refused as reserved.
var v6Ranges = []ipRange{
	{netip.MustParsePrefix("::/128"), ipForbidden, "unspecified (::)"},
	{netip.MustParsePrefix("::1/128"), ipPrivate, "loopback"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), ipForbidden, "an IPv4-translated address (::ffff:0:0:0/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), ipForbidden, "in the local-use NAT64 block 64:ff9b:1::/48"},
	{netip.MustParsePrefix("100::/64"), ipForbidden, "in the discard-only block 100::/64"},
	{netip.MustParsePrefix("2001::/23"), ipForbidden, "in the IETF protocol assignments block 2001::/23"},
	{netip.MustParsePrefix("2001:db8::/32"), ipForbidden, "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("3fff::/20"), ipForbidden, "documentation (3fff::/20)"},
	{netip.MustParsePrefix("5f00::/16"), ipForbidden, "in the SRv6 SID block 5f00::/16"},
	{netip.MustParsePrefix("fc00::/7"), ipPrivate, "unique-local (fc00::/7)"},
	{netip.MustParsePrefix("fe80::/10"), ipForbidden, "link-local (fe80::/10)"},
	{netip.MustParsePrefix("fec0::/10"), ipPrivate, "site-local (fec0::/10, deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), ipForbidden, "multicast"},
}

// The IPv6 prefixes that carry an IPv4 address.
var (
	prefixV4Compat = netip.MustParsePrefix("::/96")        // deprecated IPv4-compatible, ::a.b.c.d
	prefixNAT64    = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix (RFC 6052)
	// IPv4-translated (RFC 2765, SIIT): ::ffff:0:a.b.c.d.
	prefixTranslated = netip.MustParsePrefix("::ffff:0:0:0/96")
	prefix6to4       = netip.MustParsePrefix("2002::/16") // 6to4, 2002:AABB:CCDD::/48
	prefixTeredo     = netip.MustParsePrefix("2001::/32") // Teredo: server at bits 32-63, client (inverted) at 96-127
	prefixGlobal6    = netip.MustParsePrefix("2000::/3")  // global unicast
	v6Unspecified    = netip.IPv6Unspecified()            // ::
	v6Loopback       = netip.IPv6Loopback()               // ::1
)

// classifyIP says what an address is and, unless it is public, names why.
func classifyIP(ip netip.Addr) (ipClass, string) {
	switch {
	case !ip.IsValid():
		return ipForbidden, "not a valid address"
	case ip.Zone() != "":
		return ipForbidden, "a zoned IPv6 address"
	case ip.Is4():
		return classify4(ip)
	case ip.Is4In6():
		// An IPv4-mapped address is how a dual-stack socket spells the
		// IPv4 address itself: it is what it maps.
		c, why := classify4(ip.Unmap())
		if c == ipPublic {
			return ipPublic, ""
		}
		return c, why + ", IPv4-mapped"
	}
	return classify6(ip)
}

func classify4(ip netip.Addr) (ipClass, string) {
	if name, ok := metadataAddrs[ip]; ok {
		return ipForbidden, name
	}
	for _, r := range v4Ranges {
		if r.prefix.Contains(ip) {
			return r.class, r.name
		}
	}
	return ipPublic, ""
}

func classify6(ip netip.Addr) (ipClass, string) {
	if name, ok := metadataAddrs[ip]; ok {
		return ipForbidden, name
	}
	for _, r := range metadataPrefixes {
		if r.prefix.Contains(ip) {
			return r.class, r.name
		}
	}
	if es := embeddedV4(ip); es != nil {
		for _, e := range es {
			if c, why := embedded4(e.v4, e.how); c != ipPublic {
				return c, why
			}
		}
		return ipPublic, ""
	}
	for _, r := range v6Ranges {
		if r.prefix.Contains(ip) {
			return r.class, r.name
		}
	}
	if !prefixGlobal6.Contains(ip) {
		return ipForbidden, "reserved (outside global unicast 2000::/3)"
	}
	return ipPublic, ""
}

// embedded4 classifies an IPv4 address carried inside an IPv6 transition
// prefix. Only public addresses pass: no local set-up needs 6to4 or NAT64
// to reach loopback or RFC 1918 space, so those are refused for every host.
func embedded4(v4 netip.Addr, how string) (ipClass, string) {
	c, why := classify4(v4)
	if c == ipPublic {
		return ipPublic, ""
	}
	return ipForbidden, fmt.Sprintf("a %s embedding of %s, which is %s", how, v4, why)
}

func v4At(b [16]byte, i int) netip.Addr {
	return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]})
}

// MetadataEndpoint reports whether ip is a cloud metadata or platform
// endpoint, directly or carried inside an IPv6 address (IPv4-mapped,
// -compatible, -translated, NAT64, 6to4, Teredo), and names it. Other
// guards (the shell deny rules) use it on addresses they find in text.
func MetadataEndpoint(ip netip.Addr) (string, bool) {
	ip = ip.WithZone("")
	for _, a := range candidates4(ip) {
		if name, ok := metadataAddrs[a]; ok {
			return name, true
		}
	}
	if ip.Is6() && !ip.Is4In6() {
		if name, ok := metadataAddrs[ip]; ok {
			return name, true
		}
		for _, r := range metadataPrefixes {
			if r.prefix.Contains(ip) {
				return r.name, true
			}
		}
	}
	return "", false
}

// candidates4 is ip itself when IPv4, or the IPv4 addresses an IPv6 address
// may carry (IPv4-translated too, which CheckIP refuses as reserved).
func candidates4(ip netip.Addr) []netip.Addr {
	switch {
	case ip.Is4():
		return []netip.Addr{ip}
	case ip.Is4In6():
		return []netip.Addr{ip.Unmap()}
	case prefixTranslated.Contains(ip):
		return []netip.Addr{v4At(ip.As16(), 12)}
	}
	var out []netip.Addr
	for _, e := range embeddedV4(ip) {
		out = append(out, e.v4)
	}
	return out
}

// embedded is an IPv4 address an IPv6 transition address carries, and
// which transition it is.
type embedded struct {
	v4  netip.Addr
	how string
}

// embeddedV4 is what an IPv6 address of a transition prefix carries: the
// IPv4 address of IPv4-compatible, NAT64 and 6to4 addresses, a Teredo
// address's server and client (stored inverted); nil for any other.
func embeddedV4(ip netip.Addr) []embedded {
	b := ip.As16()
	switch {
	case ip == v6Unspecified || ip == v6Loopback:
		// Inside ::/96 but not IPv4-compatible addresses.
	case prefixV4Compat.Contains(ip):
		return []embedded{{v4At(b, 12), "IPv4-compatible"}}
	case prefixNAT64.Contains(ip):
		return []embedded{{v4At(b, 12), "NAT64"}}
	case prefix6to4.Contains(ip):
		return []embedded{{v4At(b, 2), "6to4"}}
	case prefixTeredo.Contains(ip):
		client := v4At(b, 12).As4()
		for i := range client {
			client[i] ^= 0xff
		}
		return []embedded{{v4At(b, 4), "Teredo server"}, {netip.AddrFrom4(client), "Teredo client"}}
	}
	return nil
}

// CheckIP reports whether host may connect to ip on any port; host is the
// URL host the address was resolved from (or the IP literal itself), used
// to look up AllowPrivateHosts (entries with a port do not count: see
// CheckAddr). Refused: loopback, RFC 1918, CGNAT, benchmarking,
// unique-local and site-local addresses (unless host is in
// AllowPrivateHosts), and always: cloud metadata endpoints, link-local,
// multicast, unspecified, broadcast, 0.0.0.0/8, 240.0.0.0/4,
// documentation, other reserved blocks, and IPv4 addresses embedded in IPv6
// (mapped, compatible, NAT64, 6to4, Teredo) that are not public. The error
// is a *DeniedError.
func (g *Guard) CheckIP(host string, ip netip.Addr) error {
	return g.CheckAddr(host, netip.AddrPortFrom(ip, 0))
}

// CheckAddr is CheckIP for one port: the socket address ap, reached on
// behalf of host. A deny entry of AllowPrivateHosts covering ap refuses
// it whatever its class.
func (g *Guard) CheckAddr(host string, ap netip.AddrPort) error {
	if reason := g.ipRefusal(host, ap.Addr(), ap.Port()); reason != "" {
		return &DeniedError{URL: shown(host), Reason: reason}
	}
	return nil
}

// ipRefusal is CheckAddr's reason, "" when the address is allowed; port 0
// means any port.
func (g *Guard) ipRefusal(host string, ip netip.Addr, port uint16) string {
	if g.private.deniedAt(ip, port) {
		return fmt.Sprintf("address %s port %d is denied in allow_private_hosts (the daemon's own listeners are): never allowed", ip, port)
	}
	class, why := classifyIP(ip)
	switch class {
	case ipPublic:
		return ""
	case ipPrivate:
		h := g.privateHost(host)
		if g.private.allows(h, ip, port) {
			return ""
		}
		if port != 0 && g.private.named(h, ip) {
			return fmt.Sprintf("address %s is %s, and allow_private_hosts allows it on other ports than %d", ip, why, port)
		}
		return fmt.Sprintf("address %s is %s, and the host is not in allow_private_hosts", ip, why)
	}
	return fmt.Sprintf("address %s is %s: never allowed", ip, why)
}

// privateHost normalises host (as written in a URL, brackets allowed) for
// a look-up in AllowPrivateHosts; "" when it does not normalise.
func (g *Guard) privateHost(host string) string {
	if g.private.empty() {
		return ""
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	h, _, err := normalizeHost(host)
	if err != nil {
		return ""
	}
	return h
}
