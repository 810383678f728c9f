package ownerdb_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/ownerdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
	"github.com/standmeet/standmeet/internal/testdb"
)

type mailbox struct {
	mu   sync.Mutex
	msgs []owner.RecoveryMessage
}

func (m *mailbox) DeliverRecovery(_ context.Context, msg owner.RecoveryMessage) {
	m.mu.Lock()
	m.msgs = append(m.msgs, msg)
	m.mu.Unlock()
}

func (m *mailbox) all() []owner.RecoveryMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]owner.RecoveryMessage(nil), m.msgs...)
}

func isDeclared(name string) bool { _, ok := domain.LookupEventType(name); return ok }

func newPostgres(t *testing.T) ownertest.Harness {
	pool := testdb.New(t)
	rec := events.NewRecorder(isDeclared, nil)
	box := &mailbox{}
	uow := ownerdb.New(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }, box)
	return ownertest.Harness{
		UoW: uow,
		Events: func(t *testing.T) []ownertest.Recorded {
			rows, err := pool.Query(context.Background(), `SELECT owner_id, type, subject FROM events ORDER BY seq`)
			require.NoError(t, err)
			out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ownertest.Recorded])
			require.NoError(t, err)
			return out
		},
		Delivered: box.all,
	}
}

// TestPostgresPassesTheContract runs the owner contract — the one the
// in-memory fake passes — on PostgreSQL.
func TestPostgresPassesTheContract(t *testing.T) {
	t.Parallel()
	ownertest.RunContract(t, newPostgres)
}
