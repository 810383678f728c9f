package httpx

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// These addresses are only ever passed to CheckAddr: nothing here dials.

func TestCheckAddrRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr         string
		wantEmbedded string // the IPv4 address CheckAddr must find inside addr
	}{
		// IPv4: loopback, unspecified, "this network", private, CGNAT, link-local.
		{addr: "127.0.0.1"},
		{addr: "127.255.255.255"},
		{addr: "0.0.0.0"},
		{addr: "0.1.2.3"},
		{addr: "10.0.0.1"},
		{addr: "10.255.255.255"},
		{addr: "172.16.0.1"},
		{addr: "172.31.255.255"},
		{addr: "192.168.1.1"},
		{addr: "192.168.255.255"},
		{addr: "100.64.0.1"},
		{addr: "100.127.255.255"},
		{addr: "169.254.169.254"},
		{addr: "169.254.0.0"},
		// IPv4 special-purpose registry entries that Go's IsPrivate lets through.
		{addr: "192.0.0.8"},
		{addr: "192.0.0.170"},
		{addr: "192.0.2.1"},
		{addr: "192.88.99.1"},
		{addr: "198.18.0.1"},
		{addr: "198.19.255.255"},
		{addr: "198.51.100.7"},
		{addr: "203.0.113.255"},
		{addr: "240.0.0.1"},
		{addr: "255.255.255.254"},
		{addr: "255.255.255.255"},
		{addr: "224.0.0.1"},
		{addr: "239.255.255.250"},
		// IPv6 loopback, unspecified, unique-local, link-local, site-local, multicast.
		{addr: "::1"},
		{addr: "::"},
		{addr: "fc00::1"},
		{addr: "fd00::1"},
		{addr: "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{addr: "fe80::1"},
		{addr: "fe80::1%eth0"},
		{addr: "febf:ffff::1"},
		{addr: "fec0::1"},
		{addr: "ff02::1"},
		{addr: "ff05::1:3"},
		// IPv6 special-purpose registry.
		{addr: "2001:db8::1"},
		{addr: "3fff::1"},
		{addr: "100::1"},
		{addr: "100:0:0:1::1"},
		{addr: "2001:2::1"},
		{addr: "2001:10::1"},
		{addr: "2001:1ff::1"},
		{addr: "5f00::1"},
		{addr: "64:ff9b:1::808:808", wantEmbedded: "8.8.8.8"}, // local-use NAT64
		// Outside 2000::/3: not global unicast.
		{addr: "4000::1"},
		{addr: "1::1"},
		{addr: "::ffff:0:808:808"}, // IPv4-translated (SIIT)
		// IPv4 inside IPv6.
		{addr: "::ffff:127.0.0.1", wantEmbedded: "127.0.0.1"},
		{addr: "::ffff:10.0.0.1", wantEmbedded: "10.0.0.1"},
		{addr: "::ffff:169.254.169.254", wantEmbedded: "169.254.169.254"},
		{addr: "::127.0.0.1", wantEmbedded: "127.0.0.1"},
		{addr: "::8.8.8.8", wantEmbedded: "8.8.8.8"}, // IPv4-compatible is refused whatever it embeds
		{addr: "64:ff9b::7f00:1", wantEmbedded: "127.0.0.1"},
		{addr: "64:ff9b::a9fe:a9fe", wantEmbedded: "169.254.169.254"},
		{addr: "64:ff9b::a00:1", wantEmbedded: "10.0.0.1"},
		{addr: "64:ff9b::c000:208", wantEmbedded: "192.0.2.8"},
		{addr: "2002:7f00:1::", wantEmbedded: "127.0.0.1"},
		{addr: "2002:a9fe:a9fe::1", wantEmbedded: "169.254.169.254"},
		{addr: "2002:c0a8:101:1::1", wantEmbedded: "192.168.1.1"},
		{addr: "2002:6440:1::", wantEmbedded: "100.64.0.1"},
		// Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (80ff:fffe).
		{addr: "2001:0:4136:e378:8000:63bf:80ff:fffe", wantEmbedded: "127.0.0.1"},
		{addr: "2001:0:4136:e378:8000:63bf:5601:5653", wantEmbedded: "169.254.169.172"},
		{addr: "2001:0:4136:e378:8000:63bf:f7f7:f7f7", wantEmbedded: "8.8.8.8"}, // Teredo is refused whatever it embeds
	} {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr(tc.addr)
			err := CheckAddr(a, nil)
			be := requireBlocked(t, err)
			require.Equal(t, a, be.Addr)
			require.NotEmpty(t, be.Reason)
			if tc.wantEmbedded != "" {
				require.Equal(t, netip.MustParseAddr(tc.wantEmbedded), be.Embedded)
			} else {
				require.False(t, be.Embedded.IsValid(), "unexpected embedded address %s", be.Embedded)
			}
		})
	}
}

func TestCheckAddrPasses(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{
		"8.8.8.8",
		"1.1.1.1",
		"93.184.215.14",
		// Just outside refused ranges.
		"1.0.0.0",
		"9.255.255.255",
		"11.0.0.0",
		"100.63.255.255",
		"100.128.0.0",
		"126.255.255.255",
		"128.0.0.0",
		"169.253.255.255",
		"169.255.0.0",
		"172.15.255.255",
		"172.32.0.0",
		"192.0.1.0",
		"192.0.3.0",
		"192.167.255.255",
		"192.169.0.0",
		"198.17.255.255",
		"198.20.0.0",
		"223.255.255.255",
		// Globally reachable special-purpose assignments.
		"192.31.196.1",
		"192.52.193.1",
		"192.175.48.1",
		// IPv6 global unicast.
		"2606:4700::1",
		"2001:4860:4860::8888",
		"2a00:1450:4001:80b::200e",
		"2620:4f:8000::1",
		"2001:1::1",
		"2001:3::1",
		"2001:4:112::1",
		"2001:20::1",
		"2001:200::1", // first address after 2001::/23
		"3ffe::1",     // below 3fff::/20
		// IPv4 inside IPv6 where the IPv4 address is public.
		"::ffff:8.8.8.8",
		"64:ff9b::808:808",
		"2002:808:808::1",
	} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, CheckAddr(netip.MustParseAddr(addr), nil))
		})
	}
}

func TestCheckAddrInvalid(t *testing.T) {
	t.Parallel()
	requireBlocked(t, CheckAddr(netip.Addr{}, nil))
}

func TestCheckAddrAllow(t *testing.T) {
	t.Parallel()
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		name      string
		addr      string
		allow     []netip.Prefix
		wantAllow bool
	}{
		{name: "loopback in allowed /8", addr: "127.0.0.1", allow: []netip.Prefix{p("127.0.0.0/8")}, wantAllow: true},
		{name: "loopback outside allowed /32", addr: "127.0.0.1", allow: []netip.Prefix{p("127.0.0.2/32")}},
		{name: "IPv4 prefix does not cover ::1", addr: "::1", allow: []netip.Prefix{p("127.0.0.0/8")}},
		{name: "::1 allowed", addr: "::1", allow: []netip.Prefix{p("::1/128")}, wantAllow: true},
		{name: "private allowed", addr: "10.1.2.3", allow: []netip.Prefix{p("10.0.0.0/8")}, wantAllow: true},
		{name: "mapped address matches IPv4 prefix", addr: "::ffff:10.1.2.3", allow: []netip.Prefix{p("10.0.0.0/8")}, wantAllow: true},
		{name: "mapped prefix matches IPv4 address", addr: "10.1.2.3", allow: []netip.Prefix{p("::ffff:10.0.0.0/104")}, wantAllow: true},
		{name: "NAT64 matches embedded IPv4", addr: "64:ff9b::a01:203", allow: []netip.Prefix{p("10.0.0.0/8")}, wantAllow: true},
		{name: "local NAT64 matches embedded IPv4", addr: "64:ff9b:1::a01:203", allow: []netip.Prefix{p("10.0.0.0/8")}, wantAllow: true},
		{name: "6to4 does not match embedded IPv4", addr: "2002:a01:203::1", allow: []netip.Prefix{p("10.0.0.0/8")}},
		{name: "6to4 allowed as IPv6", addr: "2002:a01:203::1", allow: []netip.Prefix{p("2002:a01:203::/48")}, wantAllow: true},
		{name: "Teredo does not match embedded IPv4", addr: "2001:0:4136:e378:8000:63bf:80ff:fffe", allow: []netip.Prefix{p("127.0.0.0/8")}},
		{name: "IPv4-compatible does not match embedded IPv4", addr: "::127.0.0.1", allow: []netip.Prefix{p("127.0.0.0/8")}},
		{name: "zone ignored", addr: "fe80::1%eth0", allow: []netip.Prefix{p("fe80::/10")}, wantAllow: true},
		{name: "ULA allowed", addr: "fd12::1", allow: []netip.Prefix{p("fd00::/8")}, wantAllow: true},
		{name: "other ULA", addr: "fc12::1", allow: []netip.Prefix{p("fd00::/8")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr(tc.addr)
			requireBlocked(t, CheckAddr(a, nil)) // refused by default
			err := CheckAddr(a, tc.allow)
			if tc.wantAllow {
				require.NoError(t, err)
			} else {
				requireBlocked(t, err)
			}
		})
	}
}

func TestEmbeddedV4(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr, want, kind string
		direct           bool
	}{
		{addr: "64:ff9b::808:808", want: "8.8.8.8", kind: "NAT64", direct: true},
		{addr: "64:ff9b::c0a8:101", want: "192.168.1.1", kind: "NAT64", direct: true},
		{addr: "64:ff9b:1::a9fe:a9fe", want: "169.254.169.254", kind: "local-use NAT64", direct: true},
		{addr: "2002:808:808::", want: "8.8.8.8", kind: "6to4"},
		{addr: "2002:7f00:1:ffff:ffff:ffff:ffff:ffff", want: "127.0.0.1", kind: "6to4"},
		{addr: "2001:0:4136:e378:8000:63bf:80ff:fffe", want: "127.0.0.1", kind: "Teredo"},
		{addr: "2001:0:4136:e378:8000:63bf:3fff:fdd2", want: "192.0.2.45", kind: "Teredo"}, // RFC 4380 example
		{addr: "::7f00:1", want: "127.0.0.1", kind: "IPv4-compatible"},
		{addr: "::a:b", want: "0.10.0.11", kind: "IPv4-compatible"},
		{addr: "::"},
		{addr: "::1"},
		{addr: "2606:4700::1"},
		{addr: "fe80::7f00:1"},
		{addr: "127.0.0.1"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			got := embeddedV4(netip.MustParseAddr(tc.addr))
			if tc.want == "" {
				require.Equal(t, embedding{}, got)
				return
			}
			require.Equal(t, embedding{kind: tc.kind, addr: netip.MustParseAddr(tc.want), direct: tc.direct}, got)
		})
	}
}

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		in   string
		want []netip.Prefix
	}{
		{in: "", want: nil},
		{in: " , ,\n", want: nil},
		{in: "127.0.0.0/8, ::1/128", want: []netip.Prefix{p("127.0.0.0/8"), p("::1/128")}},
		{in: "127.0.0.0/8,::1/128,", want: []netip.Prefix{p("127.0.0.0/8"), p("::1/128")}},
		{in: "10.0.0.0/8 192.168.0.0/16\tfd00::/8", want: []netip.Prefix{p("10.0.0.0/8"), p("192.168.0.0/16"), p("fd00::/8")}},
		{in: "127.0.0.1", want: []netip.Prefix{p("127.0.0.1/32")}},
		{in: "::1", want: []netip.Prefix{p("::1/128")}},
		{in: "::ffff:127.0.0.1", want: []netip.Prefix{p("127.0.0.1/32")}},
		{in: "::ffff:10.0.0.0/104", want: []netip.Prefix{p("10.0.0.0/8")}},
		{in: "0.0.0.0/0", want: []netip.Prefix{p("0.0.0.0/0")}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAllowList(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseAllowListRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"10.0.0.1/8",      // host bits set
		"127.1",           // non-canonical IPv4
		"0177.0.0.1",      // octal
		"0x7f000001",      // hex
		"2130706433",      // decimal
		"localhost",       // names are not resolved
		"10.0.0.0/33",     // bad length
		"10.0.0.0/",       // missing length
		"fe80::1%eth0",    // zone
		"fe80::/10%eth0",  // zone
		"127.0.0.0/8,abc", // one bad entry spoils the list
		"127.0.0.0 /8",    // stray separator
	} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAllowList(in)
			require.Error(t, err)
			require.Nil(t, got)
		})
	}
}
