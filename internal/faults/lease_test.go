package faults

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// slowly answers 204 after a few milliseconds: long enough that a second
// request to the same endpoint, from any replica, would overlap it and show
// in the sink's in-flight count.
func slowly(d time.Duration) func(w http.ResponseWriter, r *http.Request, n int64) {
	return func(w http.ResponseWriter, r *http.Request, _ int64) {
		select {
		case <-time.After(d):
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}
}

// TestFaultLeaseAcrossReplicas: bursts to a few endpoints from replicas
// sharing one database never put two requests in flight at one endpoint,
// and every event arrives: with lanes, where an endpoint's deliveries run
// in one replica, and without, where every replica works every endpoint's
// deliveries and only the lease keeps them apart.
func TestFaultLeaseAcrossReplicas(t *testing.T) {
	t.Parallel()
	for _, lanes := range []string{"true", "false"} {
		t.Run("lanes "+lanes, func(t *testing.T) {
			t.Parallel()
			replicas, endpoints, events := size(2, 3), size(3, 10), size(40, 200)
			f := startFleet(t, testdb.NewURL(t), replicas, map[string]string{"STANDMEET_WEBHOOK_LANES": lanes})
			a := f.owner(t)
			a.endpoints(t, "lease", endpoints, slowly(3*time.Millisecond))
			writeNotes(t, a, "lease", events)

			tl := waitDelivered(t, f.Pool, []*tenant{a}, events, 3*time.Minute)
			t.Logf("%d replicas, %d endpoints x %d events, lanes %s: %s", replicas, endpoints, events, lanes, tl)
			require.Zero(t, tl.Invalid, "every request must verify")
			explainLost(t, f.Pool, tl)
			require.Zero(t, tl.Lost, "lost deliveries, e.g. %v", tl.LostSample)
			require.LessOrEqual(t, tl.MaxInFlight, int64(1), "the lease let several requests reach one endpoint at once")
			requireNothingRunning(t, f.Pool, time.Minute)
		})
	}
}
