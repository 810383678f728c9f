package webhookdb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery/deliverytest"
)

// TestPostgresPassesTheDeliverContract runs the DeliverStore contract — the
// one deliverytest.Memory passes — on the PostgreSQL Store, every case on
// its own endpoints of one database. Attempts are read back from the
// delivery log's table.
func TestPostgresPassesTheDeliverContract(t *testing.T) {
	t.Parallel()
	b := setup(t)
	uow := webhookdb.NewUnitOfWork(b.pool, nil, b.ins)
	var mu sync.Mutex
	owners := map[uuid.UUID]uuid.UUID{}
	deliverytest.RunContract(t, func(*testing.T) deliverytest.Harness {
		return deliverytest.Harness{
			Store:    b.store,
			Fanout:   b.store,
			NewOwner: b.newOwner,
			NewEndpoint: func(t *testing.T, owner uuid.UUID, mif int) uuid.UUID {
				now := time.Now()
				ep := webhook.Endpoint{ID: uuid.New(), OwnerID: owner, URL: "https://a.example/h", EventTypes: []string{"*"},
					Headers: map[string]string{}, MaxInFlight: mif, TimeoutSeconds: 5, MaxAttempts: 7, Enabled: true, SecretSealed: []byte("sealed"),
					CreatedAt: now, UpdatedAt: now}
				require.NoError(t, uow.Do(context.Background(), func(tx webhook.Tx) error {
					return tx.Endpoints().Insert(context.Background(), ep)
				}))
				mu.Lock()
				owners[ep.ID] = owner
				mu.Unlock()
				return ep.ID
			},
			DeleteEndpoint: func(t *testing.T, id uuid.UUID) {
				mu.Lock()
				owner := owners[id]
				mu.Unlock()
				require.NoError(t, uow.Do(context.Background(), func(tx webhook.Tx) error {
					return tx.Endpoints().Delete(context.Background(), owner, id, time.Now())
				}))
			},
			NewEvent: func(t *testing.T, ep uuid.UUID) uuid.UUID {
				mu.Lock()
				owner := owners[ep]
				mu.Unlock()
				var id uuid.UUID
				require.NoError(t, pgx.BeginFunc(context.Background(), b.pool, func(tx pgx.Tx) error {
					var err error
					id, err = b.rec.With(tx).Record(context.Background(), owner, domain.EventCodeIssued, "s", map[string]any{"k": "v"})
					return err
				}))
				return id
			},
			Attempts: func(t *testing.T, ep uuid.UUID) []delivery.Attempt {
				rows, err := b.pool.Query(context.Background(), `SELECT job_id, endpoint_id, event_id, attempt, outcome,
  COALESCE(status_code, 0), COALESCE(latency_ms, 0), COALESCE(response, ''), COALESCE(error, ''), COALESCE(location, ''),
  attempted_at, COALESCE(webhook_timestamp, ''), COALESCE(webhook_signature, '')
FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY id`, ep)
				require.NoError(t, err)
				out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (delivery.Attempt, error) {
					var (
						a  delivery.Attempt
						ms int64
					)
					err := r.Scan(&a.JobID, &a.EndpointID, &a.EventID, &a.Attempt, &a.Outcome, &a.StatusCode, &ms,
						&a.Response, &a.Error, &a.Location, &a.At, &a.Timestamp, &a.Signature)
					a.Latency = time.Duration(ms) * time.Millisecond
					return a, err
				})
				require.NoError(t, err)
				return out
			},
		}
	})
}
