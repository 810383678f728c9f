package publishdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/publishdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/publish"
	"github.com/standmeet/standmeet/internal/testdb"
)

// TestConcurrentPublishesOfOneKeyRecordOneEvent: publishes racing with the
// same idempotency key on PostgreSQL all answer the one event recorded.
func TestConcurrentPublishesOfOneKeyRecordOneEvent(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	svc := publish.NewService(publishdb.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }), nil)
	owner := op.Caller{OwnerID: uuid.New()}
	for round := 0; round < 5; round++ {
		key := fmt.Sprintf("race-%d", round)
		const n = 8
		outs := make([]publish.Output, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = svc.Publish(context.Background(), owner, publish.Input{
					Type: "booking.cancelled", Subject: "booking://b_1", IdempotencyKey: key,
					Data: json.RawMessage(`{"booking_id":"b_1"}`),
				})
			}()
		}
		wg.Wait()
		fresh := 0
		for i := 0; i < n; i++ {
			require.NoError(t, errs[i])
			require.Equal(t, outs[0].ID, outs[i].ID, "every racer answers the same event")
			if !outs[i].Duplicate {
				fresh++
			}
		}
		require.Equal(t, 1, fresh, "exactly one racer recorded it")
		var count int
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM events e JOIN event_publish_keys k ON k.event_id = e.id
WHERE e.owner_id = $1 AND k.key = $2`, owner.OwnerID, key).Scan(&count))
		require.Equal(t, 1, count)
	}
	var total int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE owner_id = $1`, owner.OwnerID).Scan(&total))
	require.Equal(t, 5, total, "no loser's event survived")
}
