package httpx

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// errFence is what the test fence returns for a dial that is not loopback.
var errFence = errors.New("test fence: refused a dial that is not loopback")

// dialLog records every dial the policy under test let through, and refuses
// any of them that is not loopback before connect(2). It is the safety net
// that keeps a broken policy from making a test connect anywhere but
// loopback (TEAM.md rule 7).
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (l *dialLog) fence(_, address string) error {
	l.mu.Lock()
	l.addrs = append(l.addrs, address)
	l.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return errFence
	}
	return nil
}

func (l *dialLog) dials() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.addrs...)
}

// newTestClient builds a client whose dials all pass through a dialLog fence.
func newTestClient(t *testing.T, o Options) (*Client, *dialLog) {
	t.Helper()
	log := &dialLog{}
	c := newClient(o, log.fence)
	t.Cleanup(c.CloseIdleConnections)
	return c, log
}

// target is a loopback HTTP server that counts the connections it accepts
// and the requests it serves.
type target struct {
	srv   *httptest.Server
	conns atomic.Int64
	reqs  atomic.Int64
}

// newTarget starts a target listening on addr (a loopback "ip:port").
func newTarget(t *testing.T, addr string, h http.Handler) *target {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	return startTarget(t, ln, h)
}

func startTarget(t *testing.T, ln net.Listener, h http.Handler) *target {
	t.Helper()
	tg := &target{}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.reqs.Add(1)
		h.ServeHTTP(w, r)
	}))
	require.NoError(t, srv.Listener.Close())
	srv.Listener = &countingListener{Listener: ln, n: &tg.conns}
	srv.Start()
	t.Cleanup(srv.Close)
	tg.srv = srv
	return tg
}

func (tg *target) port() string {
	_, port, _ := net.SplitHostPort(tg.srv.Listener.Addr().String())
	return port
}

// URL returns the server's URL with host in place of its address.
func (tg *target) URL(host string) string {
	return "http://" + net.JoinHostPort(host, tg.port()) + "/"
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func get(t *testing.T, c *Client, rawURL string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	if resp != nil {
		t.Cleanup(func() { _ = resp.Body.Close() })
	}
	return resp, err
}

// requireBlocked asserts err is a policy refusal of an address.
func requireBlocked(t *testing.T, err error) *BlockedError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ErrBlocked)
	var be *BlockedError
	require.ErrorAs(t, err, &be)
	return be
}

// stubDNS answers the Go resolver's queries from a table, over an in-memory
// connection: names it does not know get NXDOMAIN, and no query ever leaves
// the process.
type stubDNS struct {
	mu      sync.Mutex
	records map[string][]netip.Addr // key: lower-case name with trailing dot
}

func newStubDNS() *stubDNS { return &stubDNS{records: map[string][]netip.Addr{}} }

// set replaces the answers for name.
func (s *stubDNS) set(name string, addrs ...netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[strings.ToLower(strings.TrimSuffix(name, "."))+"."] = addrs
}

func (s *stubDNS) lookup(name string) ([]netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.records[strings.ToLower(name)]
	return a, ok
}

// resolver returns a pure-Go resolver whose every DNS connection is served by s.
// /etc/hosts is still read first, as the Go resolver always does.
func (s *stubDNS) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go s.serve(server)
			return client, nil
		},
	}
}

// serve speaks DNS with TCP framing: net.Pipe is not a PacketConn, so the
// resolver uses the stream format on it.
func (s *stubDNS) serve(c net.Conn) {
	defer c.Close()
	for {
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		resp := s.answer(q)
		if resp == nil {
			return
		}
		binary.BigEndian.PutUint16(l[:], uint16(len(resp)))
		if _, err := c.Write(append(l[:], resp...)); err != nil {
			return
		}
	}
}

func (s *stubDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	// Question name: labels from offset 12 up to the root label.
	var name strings.Builder
	off := 12
	for {
		if off >= len(q) {
			return nil
		}
		n := int(q[off])
		off++
		if n == 0 {
			break
		}
		if n > 63 || off+n > len(q) {
			return nil
		}
		name.Write(q[off : off+n])
		name.WriteByte('.')
		off += n
	}
	if off+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[off:])
	question := q[12 : off+4]

	addrs, known := s.lookup(name.String())
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case qtype == 1 && a.Is4():
			answers = append(answers, rr(1, a.AsSlice()))
		case qtype == 28 && a.Is6():
			answers = append(answers, rr(28, a.AsSlice()))
		}
	}
	rcode := byte(0)
	if !known {
		rcode = 3 // NXDOMAIN
	}
	h := []byte{q[0], q[1], 0x84 | q[2]&0x01, 0x80 | rcode, 0, 1, 0, byte(len(answers)), 0, 0, 0, 0}
	out := append(h, question...)
	for _, a := range answers {
		out = append(out, a...)
	}
	return out
}

// rr builds an answer record pointing at the question name (offset 12).
func rr(typ uint16, data []byte) []byte {
	b := []byte{0xc0, 0x0c, byte(typ >> 8), byte(typ), 0, 1, 0, 0, 0, 1, 0, byte(len(data))}
	return append(b, data...)
}
