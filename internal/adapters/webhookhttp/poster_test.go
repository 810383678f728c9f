package webhookhttp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func post(t *testing.T, p *Poster, url string) (delivery.PostResponse, error) {
	t.Helper()
	h := domain.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Custom", "v")
	return p.Post(context.Background(), delivery.PostRequest{URL: url, Header: h, Body: []byte(`{"id":"1"}`)})
}

func TestPosterSendsTheRequestAndCapsTheAnswer(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("X-Custom") + " " + r.Method)
		_, _ = w.Write(bytes.Repeat([]byte("x"), delivery.MaxResponseBytes+1000))
	}))
	t.Cleanup(srv.Close)
	resp, err := post(t, New(Options{Allow: loopback}), srv.URL)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Len(t, resp.Body, delivery.MaxResponseBytes, "at most 64 KiB of the answer is read")
	require.Equal(t, "v POST", got.Load())
	require.Positive(t, resp.Latency)
}

func TestPosterRefusesInternalTargetsAtDialTime(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	for _, url := range []string{srv.URL, "http://u:p@" + strings.TrimPrefix(srv.URL, "http://")} {
		_, err := post(t, New(Options{}), url)
		require.ErrorIs(t, err, delivery.ErrBlocked, url)
	}
	require.Zero(t, hits.Load(), "nothing reached the loopback receiver")
}

func TestPosterNeverFollowsARedirect(t *testing.T) {
	t.Parallel()
	var followed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	resp, err := post(t, New(Options{Allow: loopback}), srv.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	require.Equal(t, "/elsewhere", resp.Header.Get("Location"))
	require.Zero(t, followed.Load())
}

func TestPosterTellsATimeoutFromARefusedConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	_, err := post(t, New(Options{Allow: loopback, Timeout: 100 * time.Millisecond}), srv.URL)
	require.ErrorIs(t, err, delivery.ErrTimeout)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = post(t, New(Options{Allow: loopback}), closed)
	require.Error(t, err)
	require.False(t, errors.Is(err, delivery.ErrTimeout) || errors.Is(err, delivery.ErrBlocked), "a refused connection is neither: %v", err)
}
