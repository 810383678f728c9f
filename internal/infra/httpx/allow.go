package httpx

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// ParseAllowList parses an address list such as the value of
// STANDMEET_EGRESS_ALLOW or STANDMEET_TRUSTED_PROXIES: CIDR prefixes and bare IP addresses separated by
// commas and/or white space, e.g. "127.0.0.0/8, ::1/128". A bare address is
// a single-host prefix (/32 or /128). An IPv4-mapped prefix (::ffff:a.b.c.d/n
// with n ≥ 96) is returned as the IPv4 prefix it covers.
//
// It is strict, because a typo here opens the internal network (or lets
// clients choose the address they are banned by): a prefix
// with host bits set ("10.0.0.1/8"), a zone, or an IPv4 address in a
// non-canonical form ("127.1", "0177.0.0.1") is an error naming the entry.
// The empty string yields an empty list.
func ParseAllowList(s string) ([]netip.Prefix, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) == 0 {
		return nil, nil
	}
	out := make([]netip.Prefix, 0, len(fields))
	for i, f := range fields {
		p, err := parseAllowEntry(f)
		if err != nil {
			return nil, fmt.Errorf("list entry %d %q: %w", i+1, f, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseAllowEntry(f string) (netip.Prefix, error) {
	if strings.Contains(f, "%") {
		return netip.Prefix{}, errors.New("zones are not supported")
	}
	if strings.Contains(f, "/") {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not a CIDR prefix: %w", err)
		}
		if p != p.Masked() {
			return netip.Prefix{}, fmt.Errorf("host bits set: write %s for the network or %s/%d for the host",
				p.Masked(), p.Addr(), p.Addr().BitLen())
		}
		return normalizePrefix(p), nil
	}
	a, err := netip.ParseAddr(f)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not an IP address or CIDR prefix: %w", err)
	}
	return normalizePrefix(netip.PrefixFrom(a, a.BitLen())), nil
}
