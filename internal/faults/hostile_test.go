package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/testdb"
)

// trickle answers 200 and then one byte every 500 ms for a minute: a
// slowloris body. The worker must give up by its HTTP timeout.
func trickle(w http.ResponseWriter, r *http.Request, _ int64) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i := 0; i < 120; i++ {
		if _, err := w.Write([]byte("x")); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// trickleHeaders writes the status line and headers one byte every 500 ms
// on the raw connection: the worker never even gets a response.
func trickleHeaders(w http.ResponseWriter, r *http.Request, _ int64) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + string(bytes.Repeat([]byte("s"), 200)) + "\r\n\r\n"
	for i := 0; i < len(head); i++ {
		if buf.WriteByte(head[i]) != nil || buf.Flush() != nil {
			return
		}
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		select {
		case <-r.Context().Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// hugeBody answers 200 with a 100 MB body (streamed; the sink holds none of it).
func hugeBody(w http.ResponseWriter, _ *http.Request, _ int64) {
	const size = 100 << 20
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(http.StatusOK)
	chunk := make([]byte, 32<<10)
	for sent := 0; sent < size; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// gzipBomb returns a responder answering 500 with a body that is a few
// hundred KB gzipped and 256 MiB inflated, declared as Content-Encoding:
// gzip.
func gzipBomb(t *testing.T) bench.Respond {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 256; i++ {
		_, err := zw.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	bomb := b.Bytes()
	return func(w http.ResponseWriter, _ *http.Request, _ int64) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", strconv.Itoa(len(bomb)))
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.Copy(w, bytes.NewReader(bomb))
	}
}

// redirectTo answers 307 to target.
func redirectTo(target string) bench.Respond {
	return func(w http.ResponseWriter, r *http.Request, _ int64) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}
}

// TestFaultHostileReceivers: receivers that trickle, send 100 MB, a gzip
// bomb or a redirect to another loopback address cost the worker no more
// than its timeouts, leave the server's memory bounded, and make it dial
// nothing but the registered endpoint: here the outbound client may reach
// 127.0.0.1 only, and listeners on 127.0.0.2 count every connection.
func TestFaultHostileReceivers(t *testing.T) {
	t.Parallel()
	forbidden := listenCounting(t, "127.0.0.2:0")
	f := startFleet(t, testdb.NewURL(t), 1, map[string]string{
		"STANDMEET_EGRESS_ALLOW":          "127.0.0.1/32",
		"STANDMEET_WEBHOOK_BACKOFF_SCALE": "3600",
	})
	a := f.owner(t)
	landing := f.Sink.Endpoint("landing", nil)
	eps := map[string]*bench.SinkEndpoint{
		"trickle":         a.endpoint(t, "trickle", trickle),
		"trickle-headers": a.endpoint(t, "trickle-headers", trickleHeaders),
		"huge":            a.endpoint(t, "huge", hugeBody),
		"gzip":            a.endpoint(t, "gzip", gzipBomb(t)),
		"redirect-other":  a.endpoint(t, "redirect-other", redirectTo("http://"+forbidden.Addr+"/landing")),
		"redirect-same":   a.endpoint(t, "redirect-same", redirectTo(landing.URL)),
	}
	// An endpoint registered straight at a forbidden address: the dial
	// check refuses it (or registration does).
	_, regErr := a.CreateWebhook(context.Background(), "http://"+forbidden.Addr+"/direct", []string{"corpus.note.changed"})
	if regErr != nil {
		t.Logf("registering a 127.0.0.2 endpoint was refused: %v", regErr)
	}

	srv := f.live()[0]
	before, err := srv.PeakRSS()
	require.NoError(t, err)
	writeNotes(t, a, "hostile", 2)

	// Wait until every hostile endpoint has seen both events at least once
	// and the slow ones have had an attempt end.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done := true
		for _, ep := range eps {
			ids := map[string]bool{}
			for _, ar := range ep.Arrivals() {
				ids[ar.ID] = true
			}
			if len(ids) < 2 {
				done = false
			}
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	peak, err := srv.PeakRSS()
	require.NoError(t, err)

	for name, ep := range eps {
		ars := ep.Arrivals()
		require.NotEmpty(t, ars, "%s was never called", name)
		var longest time.Duration
		for _, ar := range ars {
			longest = max(longest, ar.Done.Sub(ar.At))
		}
		// The POST's own timeout, within the job's timeout.
		require.LessOrEqual(t, longest, delivery.JobTimeout+2*time.Second, "%s held the worker %s", name, longest)
		t.Logf("%s: %d requests, answered %d, longest held %s", name, len(ars), ars[0].Status, longest.Round(10*time.Millisecond))
	}
	require.Zero(t, landing.Requests(), "a redirect was followed to loopback")
	require.Zero(t, forbidden.conns.Load(), "the server dialled an address outside its egress allow-list")

	grew := peak - before
	t.Logf("server peak RSS %d MiB before, %d MiB after (grew %d MiB)", before>>20, peak>>20, grew>>20)
	require.Less(t, grew, int64(64<<20), "the server's memory grew with a hostile body")

	// What the delivery log says: a 2xx status is a delivery even when the
	// body that follows is huge (the worker stops reading at its cap) or
	// trickles (it stops at its timeout); no status, a 500 or a redirect
	// is not.
	ctx := context.Background()
	for name, ep := range eps {
		ds, err := a.Deliveries(ctx, ep.ServerID)
		require.NoError(t, err)
		states := map[string]int{}
		for _, d := range ds {
			states[d.State]++
			switch name {
			case "huge":
				require.Equal(t, "completed", d.State, "a 2xx with a huge body is a delivery")
			case "trickle":
			default:
				require.NotEqual(t, "completed", d.State, "%s must not count as delivered", name)
			}
		}
		t.Logf("%s: deliveries %v", name, states)
	}
}
