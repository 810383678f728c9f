package httpx

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// embeddings returns IPv6 forms that carry v4, built here independently of
// embeddedV4.
func embeddings(v4 netip.Addr) map[string]netip.Addr {
	b := v4.As4()
	mk := func(prefix []byte, tail []byte) netip.Addr {
		var a [16]byte
		copy(a[:], prefix)
		copy(a[16-len(tail):], tail)
		return netip.AddrFrom16(a)
	}
	var sixToFour [16]byte
	sixToFour[0], sixToFour[1] = 0x20, 0x02
	copy(sixToFour[2:6], b[:])
	sixToFour[15] = 1
	return map[string]netip.Addr{
		"mapped":    netip.AddrFrom16(v4.As16()),
		"compat":    mk(nil, b[:]),
		"nat64":     mk([]byte{0, 0x64, 0xff, 0x9b}, b[:]),
		"nat64-loc": mk([]byte{0, 0x64, 0xff, 0x9b, 0, 1}, b[:]),
		"6to4":      netip.AddrFrom16(sixToFour),
		"teredo":    mk([]byte{0x20, 0x01, 0, 0, 0x41, 0x36, 0xe3, 0x78, 0x80, 0, 0x63, 0xbf}, []byte{^b[0], ^b[1], ^b[2], ^b[3]}),
	}
}

func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "10.0.0.1", "8.8.8.8", "169.254.169.254", "0.0.0.0", "255.255.255.255",
		"::1", "::", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "64:ff9b::a9fe:a9fe", "2002:7f00:1::",
		"2001:0:4136:e378:8000:63bf:80ff:fffe", "2606:4700::1", "fe80::1", "fd00::1", "ff02::1",
	} {
		f.Add(netip.MustParseAddr(s).AsSlice(), "")
	}
	f.Add(netip.MustParseAddr("fe80::1").AsSlice(), "eth0")
	f.Add(netip.MustParseAddr("::ffff:127.0.0.1").AsSlice(), "lo")

	f.Fuzz(func(t *testing.T, raw []byte, zone string) {
		var a netip.Addr
		switch len(raw) {
		case 4:
			a = netip.AddrFrom4([4]byte(raw))
		case 16:
			a = netip.AddrFrom16([16]byte(raw)).WithZone(zone)
		default:
			return
		}
		err := CheckAddr(a, nil)
		// Stable under Unmap, and the zone never matters.
		require.Equal(t, err == nil, CheckAddr(a.Unmap(), nil) == nil, "Unmap changed the verdict on %s", a)
		require.Equal(t, err == nil, CheckAddr(a.WithZone(""), nil) == nil, "zone changed the verdict on %s", a)

		if err != nil {
			be := requireBlocked(t, err)
			require.NotEmpty(t, be.Reason)
			// A single-host allow prefix always lets the address through.
			host := a.WithZone("").Unmap()
			require.NoError(t, CheckAddr(a, []netip.Prefix{netip.PrefixFrom(host, host.BitLen())}))
		}

		// An IPv6 form carrying a refused IPv4 address is refused; one carrying
		// a public address is allowed where the form itself is global.
		if v4 := a.Unmap(); v4.Is4() {
			v4Blocked := CheckAddr(v4, nil) != nil
			for kind, e := range embeddings(v4) {
				eBlocked := CheckAddr(e, nil) != nil
				switch {
				case v4Blocked:
					require.True(t, eBlocked, "%s form %s of refused %s passed", kind, e, v4)
				case kind == "mapped" || kind == "nat64" || kind == "6to4":
					require.False(t, eBlocked, "%s form %s of public %s refused", kind, e, v4)
				default: // compat, local-use NAT64 and Teredo are refused whatever they carry
					require.True(t, eBlocked, "%s form %s passed", kind, e)
				}
			}
		}
	})
}

func FuzzParseAllowList(f *testing.F) {
	for _, s := range []string{
		"", "127.0.0.0/8, ::1/128", "10.0.0.1/8", "127.1", "::ffff:10.0.0.0/104", "fe80::1%eth0",
		"1.2.3.4 5.6.7.8,\t9.9.9.9/32", "::/0", "0.0.0.0/0", "2001:db8::/129", ",,,",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseAllowList(s)
		if err != nil {
			require.Nil(t, got)
			return
		}
		strs := make([]string, 0, len(got))
		for _, p := range got {
			require.True(t, p.IsValid())
			require.Equal(t, p.Masked(), p, "prefix not canonical")
			require.Empty(t, p.Addr().Zone())
			require.False(t, p.Addr().Is4In6() && p.Bits() >= 96, "mapped prefix %s not converted", p)
			strs = append(strs, p.String())
		}
		// Round trip: printing and parsing again gives the same list.
		again, err := ParseAllowList(strings.Join(strs, ", "))
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}
