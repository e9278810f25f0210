package shellguard

import (
	"encoding/hex"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/toolcage/toolcage/policy/netguard"
)

// Cloud metadata services reached by address, in any spelling a resolver
// or URL parser accepts: dotted, decimal (2852039166), hex (0xa9fea9fe),
// octal (0251.0376.0251.0376), short (169.254.43518) and mixed forms,
// IPv6 (::ffff:a9fe:a9fe, ::a9fe:a9fe, 64:ff9b::a9fe:a9fe, expanded or
// zoned), and DNS names that carry the address (169-254-169-254.nip.io,
// 169.254.169.254.nip.io, magic-a9fea9fe.nip.io). Each address found in a
// command's words, or in interpreter code and its string literals, is
// checked with netguard.MetadataEndpoint: one list of endpoints for the
// HTTP guard and the shell rules. Percent-encoded text is read decoded too.

// metadataRef reports whether text names a metadata endpoint by address.
func metadataRef(text string) bool {
	dec, encoded := percentDecode(text)
	return metadataIn(text) || encoded && metadataIn(dec)
}

func metadataIn(text string) bool {
	// Bracketed IPv6 first: inside brackets a colon is not a port.
	for rest := text; ; {
		_, after, open := strings.Cut(rest, "[")
		inner, next, closed := strings.Cut(after, "]")
		if !open || !closed {
			break
		}
		inner, _, _ = strings.Cut(inner, "%") // without a zone
		if ip, err := netip.ParseAddr(inner); err == nil && isMetadata(ip) {
			return true
		}
		rest = next
	}
	return slices.ContainsFunc(strings.FieldsFunc(text, notAddrByte), func(tok string) bool {
		if strings.Count(tok, ":") >= 2 {
			if ip, err := netip.ParseAddr(tok); err == nil && isMetadata(ip) {
				return true
			}
		}
		return slices.ContainsFunc(strings.Split(tok, ":"), hostMetadata)
	})
}

// notAddrByte separates the pieces an address can be found in.
func notAddrByte(r rune) bool {
	return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == ':' || r == '-')
}

// hostMetadata reads a host name or numeric host as the addresses it may
// stand for.
func hostMetadata(h string) bool {
	labels := strings.Split(h, ".")
	if len(labels) > 64 {
		return false
	}
	dotted := len(labels) > 1
	// Runs of numeric labels: an inet_aton form of 1 to 4 parts; a longer
	// run (a version number) is tried four labels at a time.
	for i := 0; i < len(labels); {
		if !netguard.NumericLabel(labels[i]) {
			if dotted && labelMetadata(labels[i]) {
				return true
			}
			i++
			continue
		}
		j := i
		for j < len(labels) && netguard.NumericLabel(labels[j]) {
			j++
		}
		for k, n := i, min(j-i, 4); k+n <= j; k++ {
			if ip, ok := inetAton(labels[k : k+n]); ok && isMetadata(ip) {
				return true
			}
		}
		i = j
	}
	return false
}

// labelMetadata reads the address a wildcard DNS service puts in a label
// (169-254-169-254, NAME-a9fea9fe: nip.io, sslip.io) as an endpoint's.
func labelMetadata(l string) bool {
	if parts := strings.Split(l, "-"); len(parts) >= 4 {
		if ip, ok := inetAton(parts[len(parts)-4:]); ok {
			return isMetadata(ip)
		}
	}
	// NAME-a9fea9fe: the last part, eight hex digits, is the address.
	if hex := l[strings.LastIndexByte(l, '-')+1:]; len(hex) == 8 {
		ip, ok := inetAton([]string{"0x" + hex})
		return ok && isMetadata(ip)
	}
	return false
}

// inetAton parses 1 to 4 numeric parts as inet_aton does: each decimal,
// 0x hex or 0-led octal; the last part fills the remaining bytes.
func inetAton(parts []string) (netip.Addr, bool) {
	n := len(parts)
	if n == 0 || n > 4 {
		return netip.Addr{}, false
	}
	var addr uint64
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		if len(p) > 40 {
			return netip.Addr{}, false
		}
		// Leading zeros after the prefix are still the same number.
		p = strings.TrimLeft(p, "0")
		if p == "" {
			p = "0"
		}
		// Every part but the last is one byte; the last fills the rest.
		bits := 8
		if i == n-1 {
			bits = 8 * (5 - n)
		}
		v, err := strconv.ParseUint(p, base, 64)
		if err != nil || v >= 1<<bits {
			return netip.Addr{}, false
		}
		addr = addr<<bits | v
	}
	return netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)}), true
}

func isMetadata(ip netip.Addr) bool {
	_, ok := netguard.MetadataEndpoint(ip)
	return ok
}

// percentDecode decodes %XX escapes, leaving malformed ones as they are;
// it reports whether it decoded any.
func percentDecode(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 {
		return s, false // (most words: no copy)
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := hex.DecodeString(s[i+1 : i+3]); err == nil {
				b.WriteByte(v[0])
				i += 2
				changed = true
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), changed
}
