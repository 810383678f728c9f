package httpx

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrBlocked is matched (errors.Is) by every refusal of the egress policy:
// *BlockedError for a refused address and *URLRefusedError for a refused URL.
// A caller that sees it should not retry: the same request is refused again.
var ErrBlocked = errors.New("httpx: egress refused by policy")

// BlockedError reports a destination address refused by CheckAddr, at dial
// time or when called directly. It unwraps to ErrBlocked.
type BlockedError struct {
	// Addr is the address checked: for a dial, the address actually dialled.
	Addr netip.Addr
	// Embedded is the IPv4 address carried inside Addr when Addr is an
	// IPv4-mapped, IPv4-compatible, NAT64, 6to4 or Teredo address; the zero
	// Addr otherwise.
	Embedded netip.Addr
	// Reason names the range that matched, for logs and operators.
	Reason string
}

// Error implements error.
func (e *BlockedError) Error() string {
	if !e.Addr.IsValid() {
		return "httpx: egress refused: " + e.Reason
	}
	return fmt.Sprintf("httpx: egress to %s refused: %s", e.Addr, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBlocked) hold.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// specialRange is one entry of the special-purpose tables below. An empty
// name marks a globally reachable assignment inside a wider refused range:
// the first matching entry decides, so exceptions precede their range.
type specialRange struct {
	prefix netip.Prefix
	name   string
}

func (r specialRange) reason() string {
	return fmt.Sprintf("%s (%s)", r.name, r.prefix)
}

func sr(prefix, name string) specialRange {
	return specialRange{prefix: netip.MustParsePrefix(prefix), name: name}
}

// v4Special lists the refused IPv4 ranges: the IANA IPv4 Special-Purpose
// Address Registry entries that are not globally reachable, plus multicast
// and the deprecated 6to4 relay anycast. It is read-only.
//
// 192.0.0.0/24 is refused whole although 192.0.0.9 and 192.0.0.10 are
// globally reachable anycast services: no webhook receiver lives there.
var v4Special = []specialRange{
	sr("0.0.0.0/32", "unspecified address"),
	sr("0.0.0.0/8", `"this network"`),
	sr("10.0.0.0/8", "private network"),
	sr("100.64.0.0/10", "shared address space (CGNAT)"),
	sr("127.0.0.0/8", "loopback"),
	sr("169.254.0.0/16", "link-local"),
	sr("172.16.0.0/12", "private network"),
	sr("192.0.0.0/24", "IETF protocol assignments"),
	sr("192.0.2.0/24", "documentation (TEST-NET-1)"),
	sr("192.88.99.0/24", "6to4 relay anycast (deprecated)"),
	sr("192.168.0.0/16", "private network"),
	sr("198.18.0.0/15", "benchmarking"),
	sr("198.51.100.0/24", "documentation (TEST-NET-2)"),
	sr("203.0.113.0/24", "documentation (TEST-NET-3)"),
	sr("224.0.0.0/4", "multicast"),
	sr("255.255.255.255/32", "limited broadcast"),
	sr("240.0.0.0/4", "reserved"),
}

// v6Special lists the refused IPv6 ranges inside and around 2000::/3, from
// the IANA IPv6 Special-Purpose Address Registry, with the globally reachable
// exceptions (empty name) ahead of the range that contains them. It is
// read-only. Addresses outside 2000::/3 that match nothing here are refused
// by CheckAddr as not global unicast; the named entries there only give a
// clearer reason.
var v6Special = []specialRange{
	sr("::/128", "unspecified address"),
	sr("::1/128", "loopback"),
	sr("::/96", "IPv4-compatible address (deprecated)"),
	sr("::ffff:0:0:0/96", "IPv4-translated address"),
	sr("64:ff9b::/96", ""), // NAT64 well-known prefix: global; the embedded IPv4 is checked separately
	sr("64:ff9b:1::/48", "local-use NAT64"),
	sr("100::/64", "discard-only"),
	sr("100:0:0:1::/64", "dummy prefix"),
	sr("2001:1::1/128", ""), // PCP anycast
	sr("2001:1::2/128", ""), // TURN anycast
	sr("2001:1::3/128", ""), // DNS-SD SRP anycast
	sr("2001:3::/32", ""),   // AMT
	sr("2001:4:112::/48", ""),
	sr("2001:20::/28", ""), // ORCHIDv2
	sr("2001:30::/28", ""), // DRIP DETs
	sr("2001::/32", "Teredo"),
	sr("2001:2::/48", "benchmarking"),
	sr("2001:10::/28", "ORCHID (deprecated)"),
	sr("2001::/23", "IETF protocol assignments"),
	sr("2001:db8::/32", "documentation"),
	sr("3fff::/20", "documentation"),
	sr("5f00::/16", "SRv6 SIDs"),
	sr("fc00::/7", "unique-local"),
	sr("fe80::/10", "link-local"),
	sr("fec0::/10", "site-local (deprecated)"),
	sr("ff00::/8", "multicast"),
}

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// Prefixes whose addresses carry an IPv4 address; read-only.
var (
	compat6   = netip.MustParsePrefix("::/96")
	nat64WKP  = netip.MustParsePrefix("64:ff9b::/96")
	nat64Loc  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
)

// embedding is the IPv4 address carried inside an IPv6 address.
type embedding struct {
	kind string
	addr netip.Addr
	// direct is true when the IPv6 address reaches exactly the embedded IPv4
	// host (mapped, NAT64), so an allow prefix may match the IPv4 form.
	direct bool
}

// embeddedV4 returns the IPv4 address carried by the IPv6 address a, which
// must be unmapped and without zone. The zero embedding means none.
func embeddedV4(a netip.Addr) embedding {
	if !a.Is6() {
		return embedding{}
	}
	b := a.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case nat64WKP.Contains(a):
		return embedding{kind: "NAT64", addr: last, direct: true}
	case nat64Loc.Contains(a):
		// RFC 8215 leaves the prefix length to the operator; /96 is the
		// common layout and the one read here. The outer prefix is refused
		// anyway, so a wrong guess can only refuse more.
		return embedding{kind: "local-use NAT64", addr: last, direct: true}
	case sixToFour.Contains(a):
		return embedding{kind: "6to4", addr: netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(a):
		// The client's public IPv4 address is stored inverted in the last 32 bits.
		return embedding{kind: "Teredo", addr: netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})}
	case compat6.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return embedding{kind: "IPv4-compatible", addr: last}
	}
	return embedding{}
}

// CheckAddr reports whether an outbound connection to a is allowed: nil, or a
// *BlockedError naming the special-purpose range a falls in. It is the pure
// function the dialer calls on every address it connects to.
//
// An address inside one of the allow prefixes is allowed whatever its range;
// the allow prefixes are matched against a itself and, for IPv4-mapped and
// NAT64 addresses, against the embedded IPv4 address (see the package
// documentation for why the tunnelling forms are not). IPv4 prefixes written
// in IPv4-mapped form (::ffff:a.b.c.d/n, n ≥ 96) are read as IPv4.
//
// The zone of a is ignored, and a and a.Unmap() always get the same answer.
func CheckAddr(a netip.Addr, allow []netip.Prefix) error {
	if !a.IsValid() {
		return &BlockedError{Addr: a, Reason: "invalid address"}
	}
	orig := a
	a = a.WithZone("")
	var emb embedding
	if a.Is4In6() {
		a = a.Unmap()
		emb = embedding{kind: "IPv4-mapped", addr: a, direct: true}
	} else {
		emb = embeddedV4(a)
	}

	if allowed(allow, a) || (emb.direct && allowed(allow, emb.addr)) {
		return nil
	}
	blocked := func(reason string) error {
		return &BlockedError{Addr: orig, Embedded: emb.addr, Reason: reason}
	}
	if a.Is4() {
		if r, ok := lookupSpecial(v4Special, a); ok && r.name != "" {
			return blocked(r.reason())
		}
		return nil
	}
	if emb.addr.IsValid() {
		if r, ok := lookupSpecial(v4Special, emb.addr); ok && r.name != "" {
			return blocked(fmt.Sprintf("%s address embeds %s, %s", emb.kind, emb.addr, r.reason()))
		}
	}
	if r, ok := lookupSpecial(v6Special, a); ok {
		if r.name == "" {
			return nil
		}
		return blocked(r.reason())
	}
	if !globalUnicast6.Contains(a) {
		return blocked("not IPv6 global unicast (outside 2000::/3)")
	}
	return nil
}

func lookupSpecial(table []specialRange, a netip.Addr) (specialRange, bool) {
	for _, r := range table {
		if r.prefix.Contains(a) {
			return r, true
		}
	}
	return specialRange{}, false
}

func allowed(allow []netip.Prefix, a netip.Addr) bool {
	for _, p := range allow {
		if normalizePrefix(p).Contains(a) {
			return true
		}
	}
	return false
}

// normalizePrefix rewrites an IPv4-mapped prefix (::ffff:a.b.c.d/n, n ≥ 96)
// as the IPv4 prefix it covers, because addresses are unmapped before they
// are matched.
func normalizePrefix(p netip.Prefix) netip.Prefix {
	if p.IsValid() && p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96).Masked()
	}
	return p
}
