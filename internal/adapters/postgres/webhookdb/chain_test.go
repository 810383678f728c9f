package webhookdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// A fan-out run twice (a relay retry) inserts nothing the second time, and
// takes back what it counted for the deliveries River skipped as
// duplicates: the chain's counts stay those of the jobs that exist, with
// room in the window and with none.
func TestAFanOutRunTwiceLeavesTheChainCountsAsTheyWere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		full bool
	}{{"room in the window", false}, {"window full", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := context.Background()
			ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
			if tc.full {
				b.chain(t, ep.ID, 1)
				_, err := b.pool.Exec(ctx, `UPDATE webhook_endpoint_queues SET running = $2 WHERE endpoint_id = $1`, ep.ID, delivery.ChainWindow)
				require.NoError(t, err)
			}
			ds := []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued"), Chain: true}}
			first, err := b.store.Enqueue(ctx, ds, delivery.Summary{})
			require.NoError(t, err)
			require.False(t, first[0].Duplicate)
			running, pending := b.counts(t, ep.ID)

			again, err := b.store.Enqueue(ctx, ds, delivery.Summary{})
			require.NoError(t, err)
			require.True(t, again[0].Duplicate)
			require.Equal(t, first[0].JobID, again[0].JobID)
			r, p := b.counts(t, ep.ID)
			require.Equal(t, running, r, "running counts a delivery River did not insert")
			require.Equal(t, pending, p, "pending counts a delivery River did not insert")
		})
	}
}
