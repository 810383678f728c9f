package inbounddb_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/inbounddb"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
)

// slowCountingDB is the pool with every statement counted and held back a
// little, so runs that start together find a statement under way.
type slowCountingDB struct {
	*pgxpool.Pool
	queries, execs atomic.Int64
}

const statementDelay = 30 * time.Millisecond

func (d *slowCountingDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	d.queries.Add(1)
	time.Sleep(statementDelay)
	return d.Pool.Query(ctx, sql, args...)
}

func (d *slowCountingDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	d.queries.Add(1)
	time.Sleep(statementDelay)
	return d.Pool.QueryRow(ctx, sql, args...)
}

func (d *slowCountingDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	d.execs.Add(1)
	time.Sleep(statementDelay)
	return d.Pool.Exec(ctx, sql, args...)
}

// TestProcessingStateChangesShareStatements: runs that begin or finish at
// the same time share statements, and each gets the change and the record a
// statement of its own would have given it.
func TestProcessingStateChangesShareStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, pool := newPostgres(t)
	owner := h.NewOwner(t)
	src := inboundtest.AddSource(t, h, owner, inboundtest.Base)
	const n = 64
	envs := make([]inbound.Envelope, n)
	for i := range envs {
		envs[i] = inboundtest.NewEnvelope(src, fmt.Sprintf("m%d", i), fmt.Sprintf(`{"i":%d}`, i), true, inboundtest.Base)
		require.True(t, inboundtest.Insert(t, h, envs[i]).Inserted)
	}
	db := &slowCountingDB{Pool: pool}
	states := inbounddb.New(db, nil).States()

	var wg sync.WaitGroup
	recs := make([]inbound.Record, n)
	oks := make([]bool, n)
	errs := make([]error, n)
	for i := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i], oks[i], errs[i] = states.Begin(ctx, envs[i].ID, int64(1000+i), inboundtest.Base.Add(time.Second))
		}()
	}
	wg.Wait()
	for i, e := range envs {
		require.NoError(t, errs[i])
		require.True(t, oks[i])
		require.Equal(t, e.ID, recs[i].ID, "each run gets its own message")
		require.Equal(t, fmt.Sprintf(`{"i":%d}`, i), string(recs[i].Body))
		require.Equal(t, "application/json", recs[i].Headers.Get("Content-Type"))
		require.Equal(t, inbound.StateProcessing, recs[i].State)
		require.Equal(t, 1, recs[i].Attempts)
		require.EqualValues(t, 1000+i, recs[i].JobID)
		require.True(t, recs[i].LastAttemptAt.Equal(inboundtest.Base.Add(time.Second)))
	}
	require.Less(t, db.queries.Load(), int64(n/4), "the runs that began together shared statements")

	for i := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = states.MarkDone(ctx, envs[i].ID, inboundtest.Base.Add(2*time.Second))
		}()
	}
	wg.Wait()
	for i := range envs {
		require.NoError(t, errs[i])
	}
	require.Less(t, db.execs.Load(), int64(n/4), "the runs that finished together shared statements")
	inboundtest.Do(t, h, func(tx inbound.Tx) error {
		for _, e := range envs {
			r, err := tx.Inbox().Get(ctx, owner, e.ID)
			require.NoError(t, err)
			require.Equal(t, inbound.StateDone, r.State)
			require.True(t, r.DoneAt.Equal(inboundtest.Base.Add(2*time.Second)))
		}
		return nil
	})
	_, ok, err := states.Begin(ctx, envs[0].ID, 2000, inboundtest.Base.Add(3*time.Second))
	require.NoError(t, err)
	require.False(t, ok, "a message done is not begun again")
}

// TestProcessingStateChangesOfOneMessageRunInTurn: two runs of the same
// message never share a statement; the second sees the first's change, as
// one statement after another.
func TestProcessingStateChangesOfOneMessageRunInTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, pool := newPostgres(t)
	owner := h.NewOwner(t)
	src := inboundtest.AddSource(t, h, owner, inboundtest.Base)
	e := inboundtest.NewEnvelope(src, "m", `{}`, true, inboundtest.Base)
	require.True(t, inboundtest.Insert(t, h, e).Inserted)
	states := inbounddb.New(&slowCountingDB{Pool: pool}, nil).States()

	const runs = 4
	attempts := make(chan int, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok, err := states.Begin(ctx, e.ID, int64(i+1), inboundtest.Base)
			if err != nil || !ok {
				t.Errorf("begin: ok %v, %v", ok, err)
				return
			}
			attempts <- r.Attempts
		}()
	}
	wg.Wait()
	close(attempts)
	seen := map[int]bool{}
	for a := range attempts {
		seen[a] = true
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true, 4: true}, seen, "each run counted one attempt after the other")
}
