package inbounddb_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/inbounddb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier/suppliertest"
	"github.com/standmeet/standmeet/internal/testdb"
)

// newPostgres returns the PostgreSQL adapter on a fresh database as the
// contract's harness, and the database's pool.
func newPostgres(t *testing.T) (inboundtest.Harness, *pgxpool.Pool) {
	pool := testdb.New(t)
	ins, err := riverjob.NewInserter(pool, 0, nil)
	require.NoError(t, err)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	uow := inbounddb.New(pool, riverjob.NewInboundJobs(ins).With).
		RecordWith(func(tx pgx.Tx) inbounddb.BatchRecorder { return rec.Batch(tx) })
	return inboundtest.Harness{
		UoW:      uow,
		Admit:    uow,
		Refusals: uow,
		Lookup:   uow,
		NewOwner: func(t *testing.T) uuid.UUID {
			id := uuid.New()
			_, err := pool.Exec(context.Background(), `INSERT INTO owners (id, email, password_hash, created_at, updated_at)
				VALUES ($1, $2, 'x', now(), now())`, id, id.String()+"@example.test")
			require.NoError(t, err)
			return id
		},
		MaxAttemptsOf: func(t *testing.T, id uuid.UUID) []int {
			// River's JobList, filtered by kind and queue; the message id is in
			// the args.
			res, err := ins.JobList(context.Background(), river.NewJobListParams().
				Kinds(riverjob.InboundProcessKind).Queues(riverjob.QueueInbound).
				States(rivertype.JobStates()...).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(10000))
			require.NoError(t, err)
			var out []int
			for _, j := range res.Jobs {
				var args riverjob.InboundProcessArgs
				require.NoError(t, json.Unmarshal(j.EncodedArgs, &args))
				if args.MessageID == id {
					out = append(out, j.MaxAttempts)
				}
			}
			return out
		},
		UseSource: func(t *testing.T, ownerID, sourceID uuid.UUID) {
			_, err := pool.Exec(context.Background(), `INSERT INTO supplier_connections (id, owner_id, source_id, name, created_at)
				VALUES ($1, $2, $3, 'c', now())`, uuid.New(), ownerID, sourceID)
			require.NoError(t, err)
		},
		EventsOf: func(t *testing.T, owner uuid.UUID) []string {
			rows, err := pool.Query(context.Background(), `SELECT type FROM events WHERE owner_id = $1 ORDER BY id`, owner)
			require.NoError(t, err)
			out, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			return out
		},
	}, pool
}

// TestPostgresPassesTheContract runs the inbound contract — the one the
// in-memory fake passes — on PostgreSQL.
func TestPostgresPassesTheContract(t *testing.T) {
	t.Parallel()
	inboundtest.RunContract(t, func(t *testing.T) inboundtest.Harness { h, _ := newPostgres(t); return h })
}

// TestPostgresPassesTheSupplierContract runs the supplier connection
// store's contract — the one the in-memory fake passes — on PostgreSQL,
// every case on its own owners of one database.
func TestPostgresPassesTheSupplierContract(t *testing.T) {
	t.Parallel()
	h, pool := newPostgres(t)
	rec := events.NewRecorder(func(string) bool { return true }, nil)
	uow := inbounddb.NewSupplier(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) })
	suppliertest.RunContract(t, func(*testing.T) suppliertest.Harness {
		return suppliertest.Harness{UoW: uow, NewOwner: h.NewOwner,
			NewSource: func(t *testing.T, owner uuid.UUID) uuid.UUID {
				return inboundtest.AddSource(t, h, owner, suppliertest.Base).ID
			}}
	})
}
