package httpx

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var allowLoopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// sizedHandler answers /<n> with n bytes of 'a' (without Content-Length when
// n is large, so the body arrives chunked).
func sizedHandler(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			t.Errorf("bad path %q", r.URL.Path)
			return
		}
		chunk := bytes.Repeat([]byte{'a'}, 32<<10)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return // the client stopped reading, as it should
			}
			n -= k
		}
	})
}

func TestReadBodyCap(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", sizedHandler(t))
	const capBytes = 1000
	for _, tc := range []struct {
		size          int
		wantLen       int
		wantTruncated bool
	}{
		{size: 0, wantLen: 0},
		{size: capBytes - 1, wantLen: capBytes - 1},
		{size: capBytes, wantLen: capBytes},
		{size: capBytes + 1, wantLen: capBytes, wantTruncated: true},
		{size: 10 << 20, wantLen: capBytes, wantTruncated: true},
	} {
		t.Run(strconv.Itoa(tc.size), func(t *testing.T) {
			t.Parallel()
			c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allowLoopback, MaxResponseBytes: capBytes})
			resp, err := get(t, c, tg.URL("127.0.0.1")+strconv.Itoa(tc.size))
			require.NoError(t, err)
			body, truncated, err := c.ReadBody(resp)
			require.NoError(t, err)
			require.Len(t, body, tc.wantLen)
			require.Equal(t, tc.wantTruncated, truncated)
		})
	}
}

func TestReadBodyDefaultCap(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", sizedHandler(t))
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allowLoopback})
	resp, err := get(t, c, tg.URL("127.0.0.1")+strconv.Itoa(10<<20))
	require.NoError(t, err)
	body, truncated, err := c.ReadBody(resp)
	require.NoError(t, err)
	require.True(t, truncated)
	require.Len(t, body, int(DefaultMaxResponseBytes))
}

// TestDoCapsBody: the body returned by Do is capped even for a caller that
// ignores ReadBody and reads it whole.
func TestDoCapsBody(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", sizedHandler(t))
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allowLoopback, MaxResponseBytes: 4096})

	resp, err := get(t, c, tg.URL("127.0.0.1")+strconv.Itoa(10<<20))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.ErrorIs(t, err, ErrBodyTooLarge)
	require.Len(t, body, 4096)

	resp, err = get(t, c, tg.URL("127.0.0.1")+"4096")
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err, "a body exactly at the cap is whole")
	require.Len(t, body, 4096)

	// ReadBody with a larger limit than Do's cap reports truncation, not an error.
	resp, err = get(t, c, tg.URL("127.0.0.1")+"5000")
	require.NoError(t, err)
	body, truncated, err := ReadBody(resp, 1<<20)
	require.NoError(t, err)
	require.True(t, truncated)
	require.Len(t, body, 4096)
}

func TestReadBodyWithoutBody(t *testing.T) {
	t.Parallel()
	body, truncated, err := ReadBody(&http.Response{}, 10)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Empty(t, body)
}

// TestGzipBombNotDecompressed: 10 MiB of zeros gzip to about 10 KiB. The
// client neither asks for gzip nor inflates it, so the caller gets the
// compressed bytes, under the cap.
func TestGzipBombNotDecompressed(t *testing.T) {
	t.Parallel()
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, err := zw.Write(make([]byte, 10<<20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.Less(t, bomb.Len(), int(DefaultMaxResponseBytes))

	acceptEncoding := make(chan string, 1)
	tg := newTarget(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acceptEncoding <- r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(bomb.Bytes())
	}))
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allowLoopback})
	resp, err := get(t, c, tg.URL("127.0.0.1"))
	require.NoError(t, err)
	require.Empty(t, <-acceptEncoding, "the client asked for compression")
	require.False(t, resp.Uncompressed, "net/http inflated the body")
	require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))

	body, truncated, err := c.ReadBody(resp)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Equal(t, bomb.Bytes(), body)
}

// TestSlowBodyCutByTimeout: a server that trickles one body byte every
// 100 ms is cut off by the whole-request Timeout.
func TestSlowBodyCutByTimeout(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range 1000 {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allowLoopback, Timeout: 300 * time.Millisecond})
	resp, err := get(t, c, tg.URL("127.0.0.1"))
	require.NoError(t, err, "headers arrive at once")
	body, _, err := c.ReadBody(resp)
	require.Error(t, err)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "want a timeout, got %v", err)
	require.Less(t, len(body), 1000)
}

// TestSlowHeadersCutByTimeout: a server that trickles its response headers
// is cut off by the Timeout before Do returns.
func TestSlowHeadersCutByTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = http.ReadRequest(bufio.NewReader(conn))
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\n")
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range 1000 {
			if _, err := io.WriteString(conn, "X"); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()

	c, _ := newTestClient(t, Options{BlockInternalEgress: true, Allow: allowLoopback, Timeout: 300 * time.Millisecond})
	_, err = get(t, c, "http://"+ln.Addr().String()+"/")
	require.Error(t, err)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "want a timeout, got %v", err)
}
