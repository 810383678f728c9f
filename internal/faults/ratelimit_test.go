package faults

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/testdb"
)

// TestFaultRateLimitAcrossReplicas: an endpoint limited to 5 deliveries a
// second (burst 1) receives 50 events, written at once, over no less than
// 9 s and no more than 13 s although three processes deliver them; none is
// lost, and waiting for the limit spends no attempt (every delivery
// succeeds at attempt 1).
func TestFaultRateLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := startFleet(t, testdb.NewURL(t), 3, nil)
	a := f.owner(t)
	ep := a.endpoint(t, "limited", func(w http.ResponseWriter, _ *http.Request, _ int64) { w.WriteHeader(http.StatusNoContent) })
	require.NoError(t, a.Do(ctx, http.MethodPatch, "/api/admin/webhooks/"+ep.ServerID,
		map[string]any{"rate_limit_per_second": 5, "rate_limit_burst": 1}, nil))
	const events = 50
	writeNotes(t, a, "rate", events)

	tl := waitDelivered(t, f.Pool, []*tenant{a}, events, 2*time.Minute)
	t.Logf("3 replicas, 5/s: %s", tl)
	require.Zero(t, tl.Invalid)
	require.Zero(t, tl.Lost, "lost deliveries, e.g. %v", tl.LostSample)
	var at []time.Time
	for _, ar := range ep.Delivered() {
		at = append(at, ar.At)
	}
	require.Len(t, at, events)
	slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
	span := at[len(at)-1].Sub(at[0])
	t.Logf("first to last receipt: %v", span)
	require.GreaterOrEqual(t, span, 9*time.Second, "the limit let deliveries start faster than 5 a second")
	require.LessOrEqual(t, span, 13*time.Second, "the limit held deliveries back longer than it needs")
	var ds []bench.Delivery
	require.Eventually(t, func() bool {
		var err error
		ds, err = a.Deliveries(ctx, ep.ServerID)
		require.NoError(t, err)
		done := 0
		for _, d := range ds {
			if d.State == "completed" {
				done++
			}
		}
		return done == events
	}, time.Minute, 100*time.Millisecond, "every delivery completes")
	for _, d := range ds {
		require.Equal(t, 1, d.Attempt, "waiting for the limit spent an attempt on delivery %d", d.JobID)
	}
}
