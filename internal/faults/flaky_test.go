package faults

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/testdb"
)

// backoffScale compresses the outbound retry schedule (5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h…) by 3,600: hours become seconds.
const backoffScale = 3600

// flaky answers by a fixed plan per (webhook-id, attempt): 30% 500, 5% no
// answer until the sender gives up, 2% 429 with Retry-After: 1, else 204.
// The plan is a hash, so a run is reproducible.
type flaky struct {
	name  string
	mu    sync.Mutex
	tries map[string]int
}

// Answers a flaky endpoint gives.
const (
	answer500 = iota
	answerTimeout
	answer429
	answerOK
)

func planned(endpoint, id string, attempt int) int {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%d", endpoint, id, attempt)
	switch p := h.Sum32() % 100; {
	case p < 30:
		return answer500
	case p < 35:
		return answerTimeout
	case p < 37:
		return answer429
	default:
		return answerOK
	}
}

func (f *flaky) respond(w http.ResponseWriter, r *http.Request, _ int64) {
	id := r.Header.Get("webhook-id")
	f.mu.Lock()
	f.tries[id]++
	k := f.tries[id]
	f.mu.Unlock()
	switch planned(f.name, id, k) {
	case answer500:
		http.Error(w, "flaky", http.StatusInternalServerError)
	case answerTimeout:
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
			w.WriteHeader(http.StatusNoContent)
		}
	case answer429:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// TestFaultFlakyReceivers: receivers that fail 30% with 500, time out 5%
// and answer 429 with Retry-After 2% get every event in the end, with the
// attempts the schedule says and never sooner; an endpoint answering 410
// gets each event once and its deliveries end discarded.
func TestFaultFlakyReceivers(t *testing.T) {
	t.Parallel()
	replicas, endpoints, events := size(1, 2), size(4, 10), size(15, 50)
	f := startFleet(t, testdb.NewURL(t), replicas, map[string]string{"STANDMEET_WEBHOOK_BACKOFF_SCALE": fmt.Sprint(backoffScale)})
	a := f.owner(t)
	eps := make([]*bench.SinkEndpoint, endpoints)
	for i := range eps {
		name := fmt.Sprintf("flaky-%d", i)
		plan := &flaky{name: name, tries: map[string]int{}}
		eps[i] = a.endpoint(t, name, plan.respond)
	}
	gone := a.endpoint(t, "gone", func(w http.ResponseWriter, _ *http.Request, _ int64) { w.WriteHeader(http.StatusGone) })
	writeNotes(t, a, "flaky", events)

	// The 410 endpoint is counted apart, below.
	flakyOnes := &tenant{ID: a.ID, Eps: eps}
	tl := waitDelivered(t, f.Pool, []*tenant{flakyOnes}, events, 5*time.Minute)
	t.Logf("%d replicas, %d flaky endpoints x %d events: %s", replicas, endpoints, events, tl)
	require.Zero(t, tl.Invalid, "every request must verify")
	explainLost(t, f.Pool, tl)
	require.Zero(t, tl.Lost, "everything deliverable must be delivered, missing e.g. %v", tl.LostSample)
	require.LessOrEqual(t, tl.MaxInFlight, int64(1))

	answers := map[int]int{}
	for _, ep := range eps {
		byID := map[string][]bench.Arrival{}
		for _, ar := range ep.Arrivals() {
			byID[ar.ID] = append(byID[ar.ID], ar)
		}
		// River's completer writes a job's end a moment after the receiver
		// answered: wait for every job to be final.
		ds := waitEnded(t, a, ep.ServerID, events)
		require.Len(t, ds, events, "one delivery job per event at %s", ep.Name)
		for _, d := range ds {
			require.Equal(t, "completed", d.State, "delivery %d of %s", d.JobID, ep.Name)
			arrivals := byID[d.EventID]
			attempts := 0 // non-429 arrivals before the current one
			for i, ar := range arrivals {
				answers[planned(ep.Name, ar.ID, i+1)]++
				if i > 0 {
					prev := arrivals[i-1]
					least := time.Second // after a 429 with Retry-After: 1
					if prev.Status != http.StatusTooManyRequests {
						least = delivery.RetryDelay(attempts, backoffScale, 0)
					}
					// The scheduler may be late, never early. The sink notes
					// Done before its answer is flushed, so Done precedes the
					// server's clock for the retry; only a hang-up (status 0)
					// is noticed after the server gave up, by a moment.
					slack := 20 * time.Millisecond
					if prev.Status == 0 {
						slack = 250 * time.Millisecond
					}
					gap := ar.At.Sub(prev.Done)
					require.GreaterOrEqual(t, gap, least-slack,
						"%s event %s: arrival %d came %s after the previous answer (%d), want at least %s",
						ep.Name, ar.ID, i+1, gap, prev.Status, least)
				}
				if ar.Status != http.StatusTooManyRequests {
					attempts++ // a 429 is a snooze: no attempt spent
				}
			}
			require.Equal(t, attempts, d.Attempt, "%s event %s: River's attempt count against the receiver's (arrivals %d)", ep.Name, d.EventID, len(arrivals))
			require.Equal(t, 2, arrivals[len(arrivals)-1].Status/100, "the last arrival is the success")
		}
	}
	t.Logf("answers given: %d x 500, %d timeouts, %d x 429, %d x 2xx", answers[answer500], answers[answerTimeout], answers[answer429], answers[answerOK])

	// The 410 endpoint: each event once, never retried, every delivery
	// ended without completing.
	ds := waitEnded(t, a, gone.ServerID, events)
	require.Len(t, ds, events)
	goneStates := map[string]int{}
	for _, d := range ds {
		goneStates[d.State]++
		require.Contains(t, []string{"discarded", "cancelled"}, d.State, "a 410 ends delivery %d", d.JobID)
		require.Equal(t, 1, d.Attempt, "a 410 is not retried")
	}
	require.EqualValues(t, events, gone.Requests(), "the 410 endpoint hears each event once")
	t.Logf("the 410 endpoint's deliveries: %v", goneStates)
}

// waitEnded waits (a minute at most) until the endpoint has n deliveries,
// all in a final state, and returns them.
func waitEnded(t *testing.T, a *tenant, endpointID string, n int) []bench.Delivery {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ds, err := a.Deliveries(context.Background(), endpointID)
		require.NoError(t, err)
		if len(ds) >= n && allEnded(ds) || time.Now().After(deadline) {
			return ds
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func allEnded(ds []bench.Delivery) bool {
	for _, d := range ds {
		switch d.State {
		case "discarded", "cancelled", "completed":
		default:
			return false
		}
	}
	return true
}
