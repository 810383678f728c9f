package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// recordMany records n events of eventType for each owner in one
// transaction (one commit, one burst for the relay).
func recordMany(t *testing.T, ts *testServer, owners []uuid.UUID, eventType string, n int) []uuid.UUID {
	t.Helper()
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	ids := make([]uuid.UUID, 0, n*len(owners))
	err := pgx.BeginFunc(context.Background(), ts.App.Pool, func(tx pgx.Tx) error {
		r := rec.With(tx)
		for i := range n {
			for _, o := range owners {
				id, err := r.Record(context.Background(), o, eventType, "code:"+uuid.NewString(), map[string]any{"i": i})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return ids
}

// snoozesOf sums River's metadata.snoozes over the endpoint's deliveries.
func snoozesOf(t *testing.T, ts *testServer, endpointID uuid.UUID) (jobs, snoozes int64) {
	t.Helper()
	for _, j := range listJobs(t, ts, jobsOfKind(delivery.KindDeliver), forEndpoint(endpointID)) {
		var meta struct {
			Snoozes int64 `json:"snoozes"`
		}
		require.NoError(t, json.Unmarshal(j.Metadata, &meta))
		jobs++
		snoozes += meta.Snoozes
	}
	return jobs, snoozes
}

// uniqueIDs requires that the receiver got each webhook-id exactly once
// and returns how many.
func uniqueIDs(t *testing.T, rc *receiver) int {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rc.requests() {
		id := r.Header.Get("webhook-id")
		require.False(t, seen[id], "webhook-id %s delivered twice", id)
		seen[id] = true
	}
	return len(seen)
}

func TestWebhookLeaseKeepsOneDeliveryInFlight(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	ownerID, key := webhookOwner(t, ts)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		// Slow enough that deliveries would overlap without the lease.
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.issued"}})
	recordMany(t, ts, []uuid.UUID{ownerID}, "code.issued", 20)
	requireReceived(t, ts, 20, rc)
	require.Equal(t, 20, uniqueIDs(t, rc))
	require.EqualValues(t, 1, rc.maxSeen.Load(), "at most one delivery in flight")
}

// twoReplicas starts two servers sharing the database and the master key,
// with few workers each, so that neither replica can fetch all of an
// endpoint's deliveries in one go, and delivery lanes on or off.
func twoReplicas(t *testing.T, lanes bool) (a, b *testServer) {
	t.Helper()
	env := webhookEnv(1)
	env["STANDMEET_MASTER_KEY"] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	env["STANDMEET_RIVER_MAX_WORKERS"] = "8"
	env["STANDMEET_WEBHOOK_LANES"] = strconv.FormatBool(lanes)
	a = startTestServer(t, testServerOptions{Env: env})
	b = startTestServer(t, testServerOptions{Env: env, DBURL: a.DBURL})
	return a, b
}

func TestWebhookLeaseHoldsAcrossTwoReplicas(t *testing.T) {
	t.Parallel()
	// No lanes, so that the endpoint's deliveries are not kept to one
	// replica's lane: both replicas must work the queue and neither can
	// keep the lease to itself, for the test to prove anything across
	// replicas.
	a, b := twoReplicas(t, false)
	ownerID, key := webhookOwner(t, a)
	var mu sync.Mutex
	byAgent := map[string]int{}
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		byAgent[r.RemoteAddr[:len("127.0.0.1")]]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, a, key, map[string]any{"url": rc.URL, "event_types": []string{"code.issued"}})
	const n = 60
	recordMany(t, b, []uuid.UUID{ownerID}, "code.issued", n)
	requireReceived(t, a, n, rc)
	require.Equal(t, n, uniqueIDs(t, rc))
	require.EqualValues(t, 1, rc.maxSeen.Load(), "at most one delivery in flight across replicas")
	// Both replicas worked the queue (River spreads jobs over clients).
	// Every delivery was received, so a job still running has posted (its
	// completion is not written yet); its last run is the one that did.
	worked := map[string]bool{}
	for _, j := range listJobs(t, a, jobsOfKind(delivery.KindDeliver, rivertype.JobStateCompleted, rivertype.JobStateRunning)) {
		if len(j.AttemptedBy) > 0 {
			worked[j.AttemptedBy[len(j.AttemptedBy)-1]] = true
		}
	}
	require.Len(t, worked, 2, "both replicas delivered")
}

// With lanes (the default), an endpoint's deliveries are all
// fetched by the replica whose lane the fan-out chose for it, whichever
// replica recorded the events and ran the fan-outs.
func TestWebhookLanesKeepAnEndpointOnOneReplica(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t, true)
	ownerID, key := webhookOwner(t, a)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(5 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, a, key, map[string]any{"url": rc.URL, "event_types": []string{"code.issued"}})
	const n = 60
	recordMany(t, b, []uuid.UUID{ownerID}, "code.issued", n)
	requireReceived(t, a, n, rc)
	require.Equal(t, n, uniqueIDs(t, rc))
	require.EqualValues(t, 1, rc.maxSeen.Load())
	worked, queues := map[string]bool{}, map[string]bool{}
	for _, j := range listJobs(t, a, jobsOfKind(delivery.KindDeliver, rivertype.JobStateCompleted, rivertype.JobStateRunning)) {
		require.NotEmpty(t, j.AttemptedBy)
		for _, by := range j.AttemptedBy {
			worked[by] = true
		}
		queues[j.Queue] = true
	}
	require.Len(t, worked, 1, "one replica delivered: %v", worked)
	require.Len(t, queues, 1, "on one lane: %v", queues)
	for q := range queues {
		require.True(t, strings.HasPrefix(q, "webhooks_"), "a lane, not the shared queue: %s", q)
	}
}

func TestWebhookMaxInFlightAllowsThatManyAndNoMore(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	ownerID, key := webhookOwner(t, ts)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})
	createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.issued"}, "max_in_flight": 3})
	recordMany(t, ts, []uuid.UUID{ownerID}, "code.issued", 40)
	requireReceived(t, ts, 40, rc)
	require.Equal(t, 40, uniqueIDs(t, rc))
	require.LessOrEqual(t, rc.maxSeen.Load(), int64(3))
	require.Greater(t, rc.maxSeen.Load(), int64(1), "a receiver that takes more gets more")
}

// BurstResult is what a burst to endpoints measured.
type BurstResult struct {
	Endpoints, Events, Deliveries int
	// Elapsed runs from the commit of the events to the last receipt;
	// PerSecond is Deliveries / Elapsed (fan-out included).
	Elapsed   time.Duration
	PerSecond float64
	// FlowPerSecond is the rate from the first receipt to the last: how
	// fast the queued deliveries drained.
	FlowPerSecond float64
	// P50 and P99 are commit-to-receipt latencies.
	P50, P99 time.Duration
	// Snoozes is River's metadata.snoozes summed over the deliveries.
	Snoozes int64
	// SerialPerSecond is one endpoint's serial rate: the inverse of the
	// mean latency of its deliveries in the delivery log (what one worker
	// delivering back to back would reach if handing over cost nothing).
	SerialPerSecond float64
	MaxInFlight     int64
}

func (r BurstResult) String() string {
	return fmt.Sprintf("%d endpoint(s) × %d events: %d deliveries in %s — %.0f/s commit to last receipt, %.0f/s while draining"+
		" (one endpoint's serial rate %.0f/s); commit-to-receipt p50 %s p99 %s; %d snoozes (%.3f per delivery); max %d in flight per endpoint",
		r.Endpoints, r.Events, r.Deliveries, r.Elapsed.Round(time.Millisecond), r.PerSecond, r.FlowPerSecond,
		r.SerialPerSecond, r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), r.Snoozes,
		float64(r.Snoozes)/float64(max(r.Deliveries, 1)), r.MaxInFlight)
}

// runBurst gives the instance the given number of endpoints (each its own
// instant loopback receiver, at most 50 per owner: the soft limit), commits
// evs events of code.issued per owner in one transaction, and waits until
// every endpoint received every event.
func runBurst(t *testing.T, ts *testServer, endpoints, evs int) BurstResult {
	t.Helper()
	var (
		rcs    []*receiver
		ids    []uuid.UUID
		owners []uuid.UUID
		key    string
	)
	for i := range endpoints {
		if i%50 == 0 {
			var o uuid.UUID
			o, key = webhookOwner(t, ts)
			owners = append(owners, o)
		}
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		rcs = append(rcs, rc)
		ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.issued"}})
		ids = append(ids, ep.ID)
	}
	recordMany(t, ts, owners, "code.issued", evs)
	committed := time.Now()
	requireReceived(t, ts, endpoints*evs, rcs...)
	var (
		first, last time.Time
		lat         []time.Duration
		maxSeen     int64
	)
	for _, rc := range rcs {
		maxSeen = max(maxSeen, rc.maxSeen.Load())
		uniqueIDs(t, rc)
		for _, r := range rc.requests() {
			if first.IsZero() || r.At.Before(first) {
				first = r.At
			}
			last = maxTime(last, r.At)
			lat = append(lat, r.At.Sub(committed))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if os.Getenv("STANDMEET_WEBHOOK_BENCH_DEBUG") != "" {
		buckets := map[int]int{}
		for _, l := range lat {
			buckets[int(l/(250*time.Millisecond))]++
		}
		t.Logf("receipts per 250 ms since the commit: %v", buckets)
	}
	res := BurstResult{Endpoints: endpoints, Events: evs, Deliveries: len(lat), MaxInFlight: maxSeen}
	res.Elapsed = last.Sub(committed)
	res.PerSecond = float64(res.Deliveries) / res.Elapsed.Seconds()
	res.FlowPerSecond = float64(res.Deliveries-1) / last.Sub(first).Seconds()
	res.P50, res.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	for _, id := range ids {
		_, s := snoozesOf(t, ts, id)
		res.Snoozes += s
	}
	var meanMS float64
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT COALESCE(avg(latency_ms), 0)::float8 FROM webhook_attempts
WHERE endpoint_id = ANY($1)`, ids).Scan(&meanMS))
	if meanMS > 0 {
		res.SerialPerSecond = 1000 / meanMS
	}
	return res
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// TestWebhookBurstToOneEndpointFlowsWithoutASnoozeStorm queues 1,000
// deliveries to one endpoint at once: they must flow one at a time, at
// close to the endpoint's serial rate, and few of them may wake up for
// nothing (snooze).
func TestWebhookBurstToOneEndpointFlowsWithoutASnoozeStorm(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	res := runBurst(t, ts, 1, 1000)
	t.Log(res)
	require.Equal(t, 1000, res.Deliveries)
	require.EqualValues(t, 1, res.MaxInFlight)
	// Deliveries wait for the lease instead of snoozing on a timer, so the
	// snoozes stay within one per delivery.
	require.LessOrEqual(t, res.Snoozes, int64(res.Deliveries), "at most one snooze per delivery")
}

// requireReceived waits until the receivers got n requests in all; on
// failure it logs River's delivery jobs by state with their last errors.
func requireReceived(t *testing.T, ts *testServer, n int, rcs ...*receiver) {
	t.Helper()
	total := func() int {
		c := 0
		for _, rc := range rcs {
			c += rc.count()
		}
		return c
	}
	deadline := time.Now().Add(2 * time.Minute)
	for total() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := total(); got < n {
		counts, lastErr := map[rivertype.JobState]int{}, map[rivertype.JobState]string{}
		for _, j := range listJobs(t, ts, jobsOfKind(delivery.KindDeliver)) {
			counts[j.State]++
			if len(j.Errors) > 0 {
				lastErr[j.State] = j.Errors[len(j.Errors)-1].Error
			}
		}
		for state, count := range counts {
			t.Logf("deliveries %s: %d (an error: %v)", state, count, lastErr[state])
		}
		t.Fatalf("received %d of %d", got, n)
	}
}
