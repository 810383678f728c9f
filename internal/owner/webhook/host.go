package webhook

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/standmeet/standmeet/internal/domain"
)

// EgressCheckFunc applies the instance's egress policy to an address: nil
// when the outbound client may connect to ip, otherwise an error whose text
// names the refused range (e.g. "loopback (127.0.0.0/8)"). The composition
// root builds it from the policy the delivery client enforces at dial time.
type EgressCheckFunc func(ip netip.Addr) error

// EgressSetting is the configuration variable that opens refused ranges.
const EgressSetting = "STANDMEET_EGRESS_ALLOW"

// checkHost refuses a URL host the resolver would not take as written: an IP
// address in a legacy form (127.1, 2130706433, 0x7f000001, 0177.0.0.1, …),
// which the message gives in its canonical form, or a string that is not a
// hostname.
func checkHost(host string) error {
	bad := func(msg string) error { return domain.Validation(CodeInvalidURL, msg).WithField("url") }
	if strings.Contains(host, "%") {
		return bad(fmt.Sprintf("url host %q carries an IPv6 zone; webhooks go to global addresses", host))
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if v4, ok := legacyIPv4(strings.TrimSuffix(host, ".")); ok {
		return bad(fmt.Sprintf("url host %q is not a canonical IP address; write %s", host, v4))
	}
	if !isHostname(host) {
		return bad(fmt.Sprintf("url host %q is neither a hostname (letters, digits, '-' and '.'; an international name in its xn-- form) nor an IP address", host))
	}
	return nil
}

// legacyIPv4 reads host as the BSD inet_aton forms of an IPv4 address (one
// to four parts, each decimal, octal with a leading 0, or hex with 0x; the
// last part filling the remaining bytes) and returns the address.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" {
			return netip.Addr{}, false
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	last := len(vals) - 1
	var n uint64
	for i := 0; i < last; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		n |= vals[i] << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(8*uint(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// isHostname reports whether h is an ASCII hostname: labels of letters,
// digits, '-' and '_' (not at either end of a label: '-'), 1 to 63 bytes
// each, 253 in all, an optional trailing dot, and a last label that is not
// all digits (no top-level domain is).
func isHostname(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return strings.Trim(tld, "0123456789") != ""
}

// checkEgress refuses, at registration, a URL whose host is an IP literal
// or localhost in a range the egress policy refuses, naming the setting
// that would allow it. Other names are checked when a delivery dials them
// (every address they resolve to, every time), since what they resolve to
// may change.
func (s *Service) checkEgress(_ context.Context, host string) error {
	if s.egress == nil {
		return nil
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	}
	for _, a := range addrs {
		if err := s.egress(a); err != nil {
			p := netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			return domain.Validation(CodeInvalidURL, fmt.Sprintf(
				"url host %s is %s, which this server does not send webhooks to; to allow it, add it to %s (e.g. %s=%s) and restart",
				host, err.Error(), EgressSetting, EgressSetting, p)).WithField("url")
		}
	}
	return nil
}

// hostOf returns the host of a URL ValidateURL accepted.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
