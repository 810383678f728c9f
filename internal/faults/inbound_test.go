package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/testdb"
)

// hookSender signs Standard Webhooks requests for one inbound source.
type hookSender struct {
	src    bench.InboundSource
	key    []byte
	client *http.Client
}

func newHookSender(t *testing.T, a *tenant) *hookSender {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, err := a.CreateInboundSource(ctx, "faults")
	require.NoError(t, err)
	key, err := standardwebhooks.ParseSecret(src.Secret)
	require.NoError(t, err)
	return &hookSender{src: src, key: key, client: bench.NewClient(32)}
}

// send posts message id to base and returns the status and Retry-After
// (status 0: no answer).
func (h *hookSender) send(base, id string) (int, string) {
	body := []byte(fmt.Sprintf(`{"type":"faults.ping","id":%q}`, id))
	req, err := http.NewRequest(http.MethodPost, base+"/hooks/"+h.src.ID, bytes.NewReader(body))
	if err != nil {
		return 0, ""
	}
	now := time.Now()
	req.Header.Set("content-type", "application/json")
	req.Header.Set(standardwebhooks.HeaderID, id)
	req.Header.Set(standardwebhooks.HeaderTimestamp, fmt.Sprint(now.Unix()))
	req.Header.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(h.key, id, now, body))
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, ""
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// inboxStates counts the source's inbox rows by state, and the ids given
// that have no row.
func inboxStates(t *testing.T, f *fleet, sourceID string, ids []string) (map[string]int, []string) {
	t.Helper()
	ctx := context.Background()
	rows, err := f.Pool.Query(ctx, `SELECT state, count(*) FROM inbound_messages WHERE source_id = $1 GROUP BY state`, sourceID)
	require.NoError(t, err)
	states := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		states[s] = n
	}
	require.NoError(t, rows.Err())
	var missing []string
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(i), '{}') FROM unnest($2::text[]) i
		WHERE NOT EXISTS (SELECT 1 FROM inbound_messages m WHERE m.source_id = $1 AND m.message_id = i)`, sourceID, ids).Scan(&missing))
	return states, missing
}

// TestFaultKillDuringW4: signed POSTs stream into /hooks at concurrency 32
// and the server gets kill -9 in the middle. Every message answered 202 is
// in the inbox, done as it was admitted or with its job; after a restart every one of them is processed
// (in the full run, which waits for River's rescuer to return the jobs the
// killed process was running).
func TestFaultKillDuringW4(t *testing.T) {
	t.Parallel()
	rescue := rescueAfter()
	f := startFleet(t, testdb.NewURL(t), 1, map[string]string{"STANDMEET_RIVER_RESCUE_AFTER": rescue.String()})
	a := f.owner(t)
	h := newHookSender(t, a)
	base := f.live()[0].URL

	n := size(3000, 20000)
	var (
		next     atomic.Int64
		answered atomic.Int64
		mu       sync.Mutex
		accepted []string
		others   = map[int]int{}
		wg       sync.WaitGroup
	)
	next.Store(-1)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i >= int64(n) {
					return
				}
				id := fmt.Sprintf("kill_w4_%d", i)
				status, _ := h.send(base, id)
				answered.Add(1)
				mu.Lock()
				if status == http.StatusAccepted {
					accepted = append(accepted, id)
				} else {
					others[status]++
				}
				mu.Unlock()
			}
		}()
	}
	for answered.Load() < int64(n/3) {
		time.Sleep(5 * time.Millisecond)
	}
	f.kill(0)
	wg.Wait()
	mu.Lock()
	t.Logf("kill -9 after %d of %d requests: %d answered 202, others by status %v", n/3, n, len(accepted), others)
	mu.Unlock()
	require.GreaterOrEqual(t, len(accepted), n/3-32)
	for status := range others {
		require.Contains(t, []int{0}, status, "before the kill every request is accepted; after it none is answered")
	}

	states, missing := inboxStates(t, f, h.src.ID, accepted)
	require.Empty(t, missing, "a message answered 202 is missing from the inbox")
	withJob := map[uuid.UUID]bool{}
	for _, j := range mustListJobs(t, f.Pool, river.NewJobListParams().Kinds(riverjob.InboundProcessKind)) {
		ref, err := refOf(j)
		require.NoError(t, err)
		withJob[ref.MessageID] = true
	}
	rows, err := f.Pool.Query(context.Background(), `SELECT id, state FROM inbound_messages WHERE source_id = $1`, h.src.ID)
	require.NoError(t, err)
	var withoutJob int
	for rows.Next() {
		var id uuid.UUID
		var state string
		require.NoError(t, rows.Scan(&id, &state))
		if state != "done" && !withJob[id] {
			withoutJob++
		}
	}
	require.NoError(t, rows.Err())
	require.Zero(t, withoutJob, "every inbox row is done as admitted or has its processing job")
	t.Logf("inbox after the kill: %v", states)

	require.NoError(t, f.restart(context.Background(), 0))
	if !full() {
		return
	}
	// Every row counts, not only the accepted ones: a message committed
	// just before the kill whose 202 never left is processed too, and one
	// whose run died with the process waits for River's rescuer.
	inbox := func(states map[string]int) (total int) {
		for _, c := range states {
			total += c
		}
		return total
	}
	deadline := time.Now().Add(rescue + 3*time.Minute)
	for {
		states, _ = inboxStates(t, f, h.src.ID, nil)
		if (states["done"] >= len(accepted) && states["done"] == inbox(states)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("inbox after the restart: %v", states)
	require.Equal(t, inbox(states), states["done"], "every message in the inbox is processed after the restart")
	require.GreaterOrEqual(t, states["done"], len(accepted))
}

// TestFaultPostgresDownHooks: while PostgreSQL is stopped, /hooks answers
// 503 with Retry-After and stores nothing; once it is back the same server
// accepts again by itself.
func TestFaultPostgresDownHooks(t *testing.T) {
	t.Parallel()
	c := startPrivateCluster(t)
	f := startFleet(t, c.database(t, "hooks"), 1, nil)
	a := f.owner(t)
	h := newHookSender(t, a)
	base := f.live()[0].URL

	status, _ := h.send(base, "before")
	require.Equal(t, http.StatusAccepted, status)

	require.NoError(t, c.stop())
	var down []string
	for i := range 20 {
		id := fmt.Sprintf("down_%d", i)
		status, retryAfter := h.send(base, id)
		require.Equal(t, http.StatusServiceUnavailable, status, "request %d while PostgreSQL is down", i)
		require.NotEmpty(t, retryAfter, "a 503 says when to retry")
		down = append(down, id)
		if i == 9 {
			time.Sleep(time.Second) // past the source cache: the lookup itself fails
		}
	}
	require.NoError(t, c.start())

	require.Eventually(t, func() bool {
		status, _ := h.send(base, "after")
		return status == http.StatusAccepted
	}, time.Minute, 200*time.Millisecond, "the server accepts again once PostgreSQL is back")
	states, missing := inboxStates(t, f, h.src.ID, down)
	require.Len(t, missing, len(down), "nothing answered 503 was stored")
	total := 0
	for _, n := range states {
		total += n
	}
	require.Equal(t, 2, total, "only the two accepted messages are in the inbox")
}
