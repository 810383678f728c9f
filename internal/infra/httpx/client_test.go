package httpx

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAllowList(t *testing.T) {
	t.Parallel()
	v4 := newTarget(t, "127.0.0.1:0", nil)
	v6 := newTarget(t, "[::1]:0", nil)
	mustAllow := func(s string) []netip.Prefix {
		p, err := ParseAllowList(s)
		require.NoError(t, err)
		return p
	}
	for _, tc := range []struct {
		name      string
		opts      Options
		target    *target
		host      string
		wantReach bool
	}{
		{name: "default refuses loopback", opts: Options{BlockInternalEgress: true}, target: v4, host: "127.0.0.1"},
		{name: "default refuses ::1", opts: Options{BlockInternalEgress: true}, target: v6, host: "::1"},
		{name: "127.0.0.0/8 allows 127.0.0.1", opts: Options{BlockInternalEgress: true, Allow: mustAllow("127.0.0.0/8")}, target: v4, host: "127.0.0.1", wantReach: true},
		{name: "127.0.0.0/8 allows localhost", opts: Options{BlockInternalEgress: true, Allow: mustAllow("127.0.0.0/8")}, target: v4, host: "localhost", wantReach: true},
		{name: "mapped prefix allows 127.0.0.1", opts: Options{BlockInternalEgress: true, Allow: mustAllow("::ffff:127.0.0.0/104")}, target: v4, host: "127.0.0.1", wantReach: true},
		{name: "127.0.0.2/32 does not allow 127.0.0.1", opts: Options{BlockInternalEgress: true, Allow: mustAllow("127.0.0.2")}, target: v4, host: "127.0.0.1"},
		{name: "127.0.0.0/8 does not allow ::1", opts: Options{BlockInternalEgress: true, Allow: mustAllow("127.0.0.0/8")}, target: v6, host: "::1"},
		{name: "::1/128 allows ::1", opts: Options{BlockInternalEgress: true, Allow: mustAllow("127.0.0.0/8, ::1/128")}, target: v6, host: "::1", wantReach: true},
		{name: "unguarded client reaches loopback", opts: Options{}, target: v4, host: "127.0.0.1", wantReach: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, log := newTestClient(t, tc.opts)
			before := tc.target.reqs.Load()
			resp, err := get(t, c, tc.target.URL(tc.host))
			if tc.wantReach {
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.Greater(t, tc.target.reqs.Load(), before)
				return
			}
			be := requireBlocked(t, err)
			require.True(t, be.Addr.IsLoopback(), "refused %s", be.Addr)
			require.Empty(t, log.dials())
			require.Equal(t, before, tc.target.reqs.Load())
		})
	}
}

func TestBlockedErrorThroughURLError(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", nil)
	c, _ := newTestClient(t, Options{BlockInternalEgress: true})
	_, err := get(t, c, tg.URL("127.0.0.1"))

	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	require.ErrorIs(t, err, ErrBlocked)
	var be *BlockedError
	require.ErrorAs(t, err, &be)
	require.Equal(t, netip.MustParseAddr("127.0.0.1"), be.Addr)
	var ure *URLRefusedError
	require.False(t, errors.As(err, &ure))
	require.Zero(t, tg.conns.Load())
}

// TestRedirectToRefusedAddress: server A on 127.0.0.2 is allowed, server B on
// 127.0.0.1 is not, and A redirects to B. Linux routes all of 127.0.0.0/8 to
// the loopback interface, so both are real servers.
func TestRedirectToRefusedAddress(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (a, b *target) {
		t.Helper()
		b = newTarget(t, "127.0.0.1:0", nil)
		a = newTarget(t, "127.0.0.2:0", http.RedirectHandler(b.URL("127.0.0.1"), http.StatusFound))
		return a, b
	}
	onlyA := []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}

	t.Run("followed hop is refused at dial", func(t *testing.T) {
		t.Parallel()
		a, b := setup(t)
		c, log := newTestClient(t, Options{BlockInternalEgress: true, Allow: onlyA, FollowRedirects: true})
		_, err := get(t, c, a.URL("127.0.0.2"))
		be := requireBlocked(t, err)
		require.Equal(t, netip.MustParseAddr("127.0.0.1"), be.Addr)
		var ue *url.Error
		require.ErrorAs(t, err, &ue)
		require.Equal(t, b.URL("127.0.0.1"), ue.URL, "the error names the refused hop")
		require.Equal(t, int64(1), a.reqs.Load())
		require.Zero(t, b.conns.Load(), "B accepted a connection")
		require.Len(t, log.dials(), 1, "only A was dialled")
	})

	t.Run("not followed by default", func(t *testing.T) {
		t.Parallel()
		a, b := setup(t)
		c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: onlyA})
		resp, err := get(t, c, a.URL("127.0.0.2"))
		require.NoError(t, err)
		require.Equal(t, http.StatusFound, resp.StatusCode)
		require.Equal(t, b.URL("127.0.0.1"), resp.Header.Get("Location"))
		require.Zero(t, b.conns.Load())
	})

	t.Run("control: followed when B is allowed too", func(t *testing.T) {
		t.Parallel()
		a, b := setup(t)
		both := append([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, onlyA...)
		c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: both, FollowRedirects: true})
		resp, err := get(t, c, a.URL("127.0.0.2"))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, int64(1), b.reqs.Load())
	})
}

func TestRedirectScheme(t *testing.T) {
	t.Parallel()
	for _, location := range []string{
		"file:///etc/passwd",
		"ftp://127.0.0.2/",
		"gopher://127.0.0.2:70/",
	} {
		t.Run(location, func(t *testing.T) {
			t.Parallel()
			a := newTarget(t, "127.0.0.2:0", http.RedirectHandler(location, http.StatusFound))
			c, log := newTestClient(t, Options{BlockInternalEgress: true, FollowRedirects: true,
				Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
			_, err := get(t, c, a.URL("127.0.0.2"))
			var ure *URLRefusedError
			require.ErrorAs(t, err, &ure)
			require.ErrorIs(t, err, ErrBlocked)
			require.Equal(t, int64(1), a.reqs.Load())
			require.Len(t, log.dials(), 1)
		})
	}
}

func TestRedirectUserinfo(t *testing.T) {
	t.Parallel()
	var a *target
	a = newTarget(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, "http://user:secret@127.0.0.2:"+a.port()+"/landed", http.StatusFound)
		}
	}))
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, FollowRedirects: true,
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	_, err := get(t, c, a.URL("127.0.0.2"))
	var ure *URLRefusedError
	require.ErrorAs(t, err, &ure)
	require.NotContains(t, ure.URL, "secret", "the password is redacted")
	require.Equal(t, int64(1), a.reqs.Load(), "the /landed hop was not sent")
}

func TestRedirectLimit(t *testing.T) {
	t.Parallel()
	loop := newTarget(t, "127.0.0.1:0", http.RedirectHandler("/", http.StatusFound))
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	for _, tc := range []struct {
		max, wantRequests int
	}{
		{max: 1, wantRequests: 2},
		{max: 3, wantRequests: 4},
		{max: 0, wantRequests: DefaultMaxRedirects + 1},
	} {
		c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allow, FollowRedirects: true, MaxRedirects: tc.max})
		before := loop.reqs.Load()
		_, err := get(t, c, loop.URL("127.0.0.1"))
		require.ErrorIs(t, err, ErrTooManyRedirects)
		require.NotErrorIs(t, err, ErrBlocked)
		require.Equal(t, int64(tc.wantRequests), loop.reqs.Load()-before, "MaxRedirects %d", tc.max)
	}
}

func TestURLRefusedBeforeDial(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", nil)
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	hostPort := "127.0.0.1:" + tg.port()

	// Control: the server is reachable with a plain URL.
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allow})
	_, err := get(t, c, "http://"+hostPort+"/")
	require.NoError(t, err)
	conns := tg.conns.Load()

	for _, raw := range []string{
		"ftp://" + hostPort + "/",
		"gopher://" + hostPort + "/",
		"file:///etc/passwd",
		"ws://" + hostPort + "/",
		"http://user:pass@" + hostPort + "/",
		"http://user@" + hostPort + "/",
		"https://user:pass@" + hostPort + "/",
		"http://:@" + hostPort + "/",
	} {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			c, log := newTestClient(t, Options{BlockInternalEgress: true, Allow: allow})
			_, err := get(t, c, raw)
			var ure *URLRefusedError
			require.ErrorAs(t, err, &ure)
			require.ErrorIs(t, err, ErrBlocked)
			require.Empty(t, log.dials())
			require.Equal(t, conns, tg.conns.Load())
		})
	}
}

// TestDNSRebinding: the name answers an allowed address for the first
// connection and a refused one for the second. Because the check is on the
// dialled address, the second connection is refused.
func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	// A on 127.0.0.2 and B on 127.0.0.1, on the same port, as a rebinding
	// attacker would need.
	var a, b *target
	for range 20 {
		lnA, err := net.Listen("tcp", "127.0.0.2:0")
		require.NoError(t, err)
		_, port, _ := net.SplitHostPort(lnA.Addr().String())
		lnB, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			require.NoError(t, lnA.Close())
			continue
		}
		a, b = startTarget(t, lnA, nil), startTarget(t, lnB, nil)
		break
	}
	require.NotNil(t, a, "no port free on both 127.0.0.2 and 127.0.0.1")

	stub := newStubDNS()
	stub.set("rebind.test", netip.MustParseAddr("127.0.0.2"))
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Resolver: stub.resolver(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})

	resp, err := get(t, c, a.URL("rebind.test"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, int64(1), a.reqs.Load())

	stub.set("rebind.test", netip.MustParseAddr("127.0.0.1"))
	c.CloseIdleConnections() // force a new dial, as after a keep-alive timeout
	_, err = get(t, c, a.URL("rebind.test"))
	be := requireBlocked(t, err)
	require.Equal(t, netip.MustParseAddr("127.0.0.1"), be.Addr)
	require.Zero(t, b.conns.Load())
}

// TestProxyEnvironmentIgnored sets HTTP_PROXY to a recording proxy and shows
// the request still goes straight to the target. The target is named through
// the stub DNS: net/http never proxies "localhost" or loopback literals, so a
// loopback literal could not show the difference.
func TestProxyEnvironmentIgnored(t *testing.T) {
	// No t.Parallel: t.Setenv changes the whole process.
	proxy := newTarget(t, "127.0.0.1:0", nil)
	tg := newTarget(t, "127.0.0.1:0", nil)
	proxyURL := "http://127.0.0.1:" + proxy.port()
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(k, proxyURL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	stub := newStubDNS()
	stub.set("receiver.test", netip.MustParseAddr("127.0.0.1"))
	c, log := newTestClient(t, Options{BlockInternalEgress: true, Resolver: stub.resolver(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})

	resp, err := get(t, c, tg.URL("receiver.test"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, int64(1), tg.reqs.Load())
	require.Zero(t, proxy.conns.Load(), "the request went through HTTP_PROXY")
	require.Equal(t, []string{"127.0.0.1:" + tg.port()}, log.dials())

	tr := c.hc.Transport.(*urlGuard).base
	require.Nil(t, tr.Proxy)
}

func TestTransportSettings(t *testing.T) {
	t.Parallel()
	c := NewClient(Options{Timeout: 2 * time.Second, DialTimeout: time.Minute, NoRetry: true})
	tr := c.hc.Transport.(*urlGuard).base
	require.Nil(t, tr.Proxy)
	require.True(t, tr.DisableCompression)
	require.False(t, tr.DisableKeepAlives, "NoRetry keeps connection reuse for requests with a body")
	require.True(t, c.hc.Transport.(*urlGuard).noReuse.DisableKeepAlives, "body-less requests under NoRetry never reuse a connection")
	require.Nil(t, c.hc.Transport.(*urlGuard).noReuse.Proxy)
	require.LessOrEqual(t, tr.ResponseHeaderTimeout, 2*time.Second)
	require.LessOrEqual(t, tr.TLSHandshakeTimeout, 2*time.Second)
	require.Positive(t, tr.MaxIdleConnsPerHost)
	require.Positive(t, tr.IdleConnTimeout)
	require.Equal(t, 2*time.Second, c.hc.Timeout)
	require.Equal(t, DefaultMaxResponseBytes, c.maxBody)

	require.Equal(t, 4, tr.MaxIdleConnsPerHost)
	many := NewClient(Options{MaxIdleConnsPerHost: 200}).hc.Transport.(*urlGuard).base
	require.Equal(t, 200, many.MaxIdleConnsPerHost)
	require.GreaterOrEqual(t, many.MaxIdleConns, 200)

	d := NewClient(Options{})
	require.Equal(t, DefaultTimeout, d.hc.Timeout)
	require.False(t, d.hc.Transport.(*urlGuard).base.DisableKeepAlives)
}

// TestNoRetryNeverResendsButReusesConnections: under NoRetry a POST on a
// pooled connection that the server drops after reading it is not re-sent,
// although net/http would replay it (it has GetBody and an Idempotency-Key);
// and consecutive POSTs share one connection.
func TestNoRetryNeverResendsButReusesConnections(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		noRetry   bool
		wantSeen  int64
		wantError bool
	}{
		{"no retry", true, 3, true},
		{"default transport replays", false, 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var seen, conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				if seen.Add(1) == 3 {
					// Read the third request, then drop the connection unanswered.
					hj, _ := w.(http.Hijacker)
					conn, _, err := hj.Hijack()
					if err == nil {
						_ = conn.Close()
					}
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
			cl := NewClient(Options{BlockInternalEgress: true, Allow: allow, NoRetry: c.noRetry, Timeout: 5 * time.Second})
			post := func() error {
				req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"n":1}`))
				require.NoError(t, err)
				req.Header.Set("Idempotency-Key", "k")
				resp, err := cl.Do(req)
				if err != nil {
					return err
				}
				_, _, err = cl.ReadBody(resp)
				return err
			}
			require.NoError(t, post())
			require.NoError(t, post())
			require.Equal(t, int64(1), conns.Load(), "the second POST reused the connection")
			err := post()
			require.Equal(t, c.wantError, err != nil, "third POST: %v", err)
			require.Equal(t, c.wantSeen, seen.Load())
		})
	}
}
