// Package httpx is StandMeet's outbound HTTP client: every request the server
// makes to an address a user supplied (webhook endpoints, fetched pages) goes
// through it, so it is where server-side request forgery (SSRF) is stopped.
//
// # The address is checked when it is dialled
//
// With Options.BlockInternalEgress set, the check runs in the dialer's
// Control hook (net.Dialer.ControlContext). That hook runs after the socket is
// created and before connect(2), and it receives the exact address the kernel
// is about to connect to. Nothing leaves the host for a refused address: no
// SYN, no TLS ClientHello, no request line.
//
// The obvious alternative, resolving the host name first, checking the
// answers and then handing the URL to net/http, is wrong in several ways:
//
//   - DNS rebinding: net/http resolves the name again when it dials. A name
//     served with TTL 0 answers a public address to the check and 127.0.0.1
//     to the dial. The check must be on the address actually dialled.
//   - Resolver disagreement: the cgo resolver (glibc) reads "127.1",
//     "0x7f000001", "2130706433" and "0177.0.0.1" as 127.0.0.1, while the
//     pure-Go resolver calls them unresolvable names. A check that parses the
//     host itself can disagree with the resolver that dials.
//   - Several answers: a name with several A/AAAA records is dialled address by
//     address (and IPv4/IPv6 in parallel), and redirects and pooled
//     connections dial again later. Each of those dials passes through Control;
//     a pre-check would have to reproduce all of that.
//
// Because the check sits in the dialer, it covers redirects (every hop dials)
// and every connection the transport opens. http.Transport.Proxy is nil: a
// proxy taken from HTTP_PROXY would make the transport dial the proxy instead
// of the target, and the check would see only the proxy's address.
//
// # What is refused
//
// CheckAddr refuses loopback, unspecified, RFC 1918 private, shared (CGNAT,
// 100.64.0.0/10), link-local, multicast and broadcast addresses, and every
// entry of the IANA IPv4 and IPv6 special-purpose address registries that is
// not globally reachable (documentation, benchmarking, 240.0.0.0/4,
// 192.0.0.0/24, 2001::/23 except its globally reachable assignments, …).
// IPv6 is checked as an allow list: outside 2000::/3 (and the NAT64 prefix)
// nothing is globally routed unicast, so everything there is refused.
//
// IPv6 forms that carry an IPv4 address are unwrapped and the IPv4 address is
// checked too: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
// NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48, read with the /96
// layout), 6to4 (2002::/16) and Teredo (2001::/32, client address inverted).
// netip.Addr.Unmap handles only the first of these. Teredo and
// IPv4-compatible addresses are refused whatever they embed: both are
// deprecated tunnels with no place in a webhook URL. Zones (fe80::1%eth0) are
// ignored: the decision depends on the address bits only.
//
// # The allow list
//
// Options.Allow (usually from STANDMEET_EGRESS_ALLOW through ParseAllowList)
// lets chosen internal prefixes through, for example a receiver on
// 127.0.0.0/8 in development. It is matched against the dialled address, and,
// for IPv4-mapped and NAT64 addresses, also against the embedded IPv4 address:
// those forms reach exactly that IPv4 host (a DNS64 network synthesizes NAT64
// addresses for internal names). For 6to4, Teredo and IPv4-compatible
// addresses only the IPv6 address itself can be allowed: their packets go
// through third-party relays and tunnels, not to the allowed network.
//
// # Requests and responses
//
// Only http and https URLs without userinfo are sent (a URL with user:pass@
// makes net/http send Basic credentials); anything else is refused with
// *URLRefusedError before any dial, on the first request and on every redirect
// hop. Redirects are not followed unless Options.FollowRedirects is set.
// Transparent decompression is disabled (a small gzip body can expand without
// bound), and Client.Do caps every response body at Options.MaxResponseBytes;
// ReadBody reads a capped body and reports truncation.
//
// Every refusal by the policy matches ErrBlocked with errors.Is, through the
// *url.Error that net/http wraps it in.
package httpx
