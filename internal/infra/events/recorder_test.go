package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// declared is the test catalog.
func declared(types ...string) func(string) bool {
	set := map[string]bool{}
	for _, t := range types {
		set[t] = true
	}
	return func(s string) bool { return set[s] }
}

func countEvents(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n))
	return n
}

func TestRecordWritesTheEventInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := events.NewMetrics(reg)
	require.NoError(t, err)
	rec := events.NewRecorder(declared("thing.happened"), m)
	owner := uuid.New()

	// LISTEN on a separate connection proves the wake-up is sent at commit.
	listener, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer listener.Release()
	_, err = listener.Exec(ctx, `LISTEN `+events.Channel)
	require.NoError(t, err)

	var id uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		id, err = rec.With(tx).Record(ctx, owner, "thing.happened", "wiki://a", map[string]any{"n": 1})
		return err
	}))
	var (
		gotOwner         uuid.UUID
		gotType, gotSubj string
		data             json.RawMessage
		fannedOut        *string
	)
	require.NoError(t, pool.QueryRow(ctx,
		`SELECT owner_id, type, subject, data, fanned_out_at::text FROM events WHERE id = $1`, id).
		Scan(&gotOwner, &gotType, &gotSubj, &data, &fannedOut))
	require.Equal(t, owner, gotOwner)
	require.Equal(t, "thing.happened", gotType)
	require.Equal(t, "wiki://a", gotSubj)
	require.JSONEq(t, `{"n":1}`, string(data))
	require.Nil(t, fannedOut)

	n, err := listener.Conn().WaitForNotification(ctx)
	require.NoError(t, err)
	require.Equal(t, events.Channel, n.Channel)
	require.Empty(t, n.Payload)
	require.InDelta(t, 1, metricValue(t, reg, "standmeet_events_recorded_total", "type", "thing.happened"), 0)
}

func TestRecordRolledBackLeavesNothing(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared("thing.happened"), nil)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = rec.With(tx).Record(ctx, uuid.New(), "thing.happened", "s", struct {
		A string `json:"a"`
	}{"x"})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	require.Zero(t, countEvents(t, pool))
	require.Empty(t, listJobs(t, pool))
}

func TestRecordRefusesWithoutWriting(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared("thing.happened"), nil)
	cases := []struct {
		name      string
		eventType string
		data      any
		want      error
	}{
		{"undeclared type", "thing.unknown", map[string]any{}, events.ErrUndeclaredType},
		{"empty type", "", map[string]any{}, events.ErrUndeclaredType},
		{"nil data", "thing.happened", nil, events.ErrDataNotObject},
		{"array data", "thing.happened", []int{1}, events.ErrDataNotObject},
		{"string data", "thing.happened", "x", events.ErrDataNotObject},
		{"raw array", "thing.happened", json.RawMessage(` [1]`), events.ErrDataNotObject},
		{"unmarshalable", "thing.happened", map[string]any{"f": func() {}}, events.ErrDataNotObject},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := pool.Begin(ctx)
			require.NoError(t, err)
			_, err = rec.With(tx).Record(ctx, uuid.New(), tc.eventType, "s", tc.data)
			require.ErrorIs(t, err, tc.want)
			// The transaction is still usable: nothing was sent that failed.
			require.NoError(t, tx.Commit(ctx))
		})
	}
	require.Zero(t, countEvents(t, pool))
}

func TestRecordAcceptsObjectShapes(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared("thing.happened"), nil)
	for _, data := range []any{
		map[string]any{},
		struct{}{},
		json.RawMessage(` {"a":[1,2]}`),
		&struct {
			B bool `json:"b"`
		}{true},
	} {
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := rec.With(tx).Record(ctx, uuid.New(), "thing.happened", "", data)
			return err
		}))
	}
	require.Equal(t, 4, countEvents(t, pool))
}

// metricValue returns the value of the counter or gauge name whose label
// labelName equals labelValue (or the unlabelled one when labelName is "").
func metricValue(t *testing.T, reg *prometheus.Registry, name, labelName, labelValue string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			match := labelName == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == labelName && l.GetValue() == labelValue {
					match = true
				}
			}
			if !match {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// A routed Recorder writes, in a batch, the events no subscription wants as
// already relayed (relayed now, no job), asking each subscription with an
// Owners query in the one statement that writes the batch; an event some
// subscription wants, or a subscription without Owners, waits for the
// relay. An unrouted Recorder settles nothing.
func TestABatchWritesTheEventsNobodyWantsAsRelayed(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	busy, idle, other := uuid.New(), uuid.New(), uuid.New()
	subs := []events.Subscription{
		{Kind: "k.owned", EventTypes: []string{"a.owned", "a.both", "a.two"},
			Owners: events.OwnersQuery(fmt.Sprintf(`SELECT o FROM unnest($1::uuid[]) AS o WHERE o = '%s'`, busy))},
		{Kind: "k.other", EventTypes: []string{"a.two"},
			Owners: events.OwnersQuery(fmt.Sprintf(`SELECT o FROM unnest($1::uuid[]) AS o WHERE o = '%s'`, other))},
		{Kind: "k.all", EventTypes: []string{"a.both"}},
	}
	types := declared("a.owned", "a.both", "a.two", "a.none")
	rec := events.NewRecorder(types, nil)
	require.NoError(t, rec.Route(subs))
	plain := events.NewRecorder(types, nil)

	type rec1 struct {
		owner   uuid.UUID
		typ     string
		relayed bool
	}
	cases := []rec1{
		{busy, "a.owned", false}, // its subscriber wants the owner
		{idle, "a.owned", true},  // its only subscriber leaves the owner out
		{idle, "a.both", false},  // a subscriber without Owners wants every owner
		{idle, "a.none", true},   // nobody subscribes to the type
		{busy, "a.none", true},
		{other, "a.two", false}, // the second of its two subscribers wants the owner
		{busy, "a.two", false},  // the first does
		{idle, "a.two", true},   // neither does
		{other, "a.owned", true},
	}
	write := func(r *events.Recorder) []uuid.UUID {
		var ids []uuid.UUID
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			counted := &countingTx{Tx: tx}
			b := r.Batch(counted)
			for _, c := range cases {
				id, err := b.Record(ctx, c.owner, c.typ, "s", map[string]any{})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			if err := b.Flush(ctx); err != nil {
				return err
			}
			require.Equal(t, 1, counted.statements, "the batch, its questions and its wake-up are one statement")
			return nil
		}))
		return ids
	}
	relayed := func(id uuid.UUID) (bool, string) {
		var at *string
		var fanout *string
		require.NoError(t, pool.QueryRow(ctx, `SELECT fanned_out_at::text, fanout::text FROM events WHERE id = $1`, id).Scan(&at, &fanout))
		if fanout == nil {
			return at != nil, ""
		}
		return at != nil, *fanout
	}
	for i, id := range write(rec) {
		got, fanout := relayed(id)
		require.Equal(t, cases[i].relayed, got, "%+v", cases[i])
		if got {
			require.Equal(t, "[]", fanout, "relayed with no job")
		}
	}
	for _, id := range write(plain) {
		got, _ := relayed(id)
		require.False(t, got, "an unrouted Recorder leaves every event to the relay")
	}
}

// A batch runs each Owners query once, however many events ask it (not
// once per event, as it would inlined into the per-event check).
func TestABatchAsksEachOwnersQueryOnce(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	busy := uuid.New()
	_, err := pool.Exec(ctx, `CREATE TABLE wanted_owners (owner uuid NOT NULL); INSERT INTO wanted_owners VALUES ('`+busy.String()+`')`)
	require.NoError(t, err)
	rec := events.NewRecorder(declared("a.owned"), nil)
	require.NoError(t, rec.Route([]events.Subscription{{Kind: "k.owned", EventTypes: []string{"a.owned"},
		Owners: `SELECT owner FROM wanted_owners WHERE owner = ANY($1)`}}))
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		b := rec.Batch(tx)
		for i := range 20 {
			owner := busy
			if i%2 == 1 {
				owner = uuid.New()
			}
			if _, err := b.Record(ctx, owner, "a.owned", "s", map[string]any{}); err != nil {
				return err
			}
		}
		if err := b.Flush(ctx); err != nil {
			return err
		}
		var scans int64
		if err := tx.QueryRow(ctx, `SELECT pg_stat_get_xact_numscans('wanted_owners'::regclass)`).Scan(&scans); err != nil {
			return err
		}
		require.EqualValues(t, 1, scans, "the query ran once for the batch's 20 events")
		var waiting int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND owner_id = $1`, busy).Scan(&waiting); err != nil {
			return err
		}
		require.Equal(t, 10, waiting, "the wanted owner's events wait for the relay")
		return nil
	}))
}

// countingTx counts the statements run through it.
type countingTx struct {
	pgx.Tx
	statements int
}

func (c *countingTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.statements++
	return c.Tx.Exec(ctx, sql, args...)
}

func (c *countingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.statements++
	return c.Tx.Query(ctx, sql, args...)
}

func (c *countingTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c.statements++
	return c.Tx.QueryRow(ctx, sql, args...)
}

// A batch whose events all settle queues no wake-up and leaves the spacing
// to the next writer: a Wake right after it runs its statement, where a Wake
// within the spacing of a queued wake-up runs none.
func TestABatchThatSettlesEverythingLeavesTheWakeUpToTheNext(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared("a.owned"), nil)
	require.NoError(t, rec.Route([]events.Subscription{{Kind: "k.owned", EventTypes: []string{"a.owned"},
		Owners: `SELECT o FROM unnest($1::uuid[]) AS o WHERE false`}}))
	// A transaction already ended fails any statement: Wake on it fails
	// only if it runs one.
	closed, err := pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, closed.Rollback(ctx))
	settle := func() time.Duration {
		var took time.Duration
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			b := rec.Batch(tx)
			if _, err := b.Record(ctx, uuid.New(), "a.owned", "s", map[string]any{}); err != nil {
				return err
			}
			start := time.Now()
			if err := b.Flush(ctx); err != nil {
				return err
			}
			require.Error(t, rec.With(closed).Wake(ctx), "the settled batch left the wake-up to the next writer")
			took = time.Since(start)
			return nil
		}))
		return took
	}
	for range 5 {
		// Past the spacing of the last try's wake-up, the batch claims one.
		time.Sleep(events.NotifySpacing)
		if settle() < events.NotifySpacing {
			return
		}
	}
	t.Skip("the machine never flushed a batch within the spacing")
}

// TestWakeQueuesOneWakeUpPerSpacing: a transaction that writes events by
// SQL of its own (a trigger) wakes the relay through Wake, at commit, and a
// Wake within NotifySpacing of it runs no statement.
func TestWakeQueuesOneWakeUpPerSpacing(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared(), nil)
	listener, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer listener.Release()
	_, err = listener.Exec(ctx, `LISTEN `+events.Channel)
	require.NoError(t, err)

	// A transaction already ended fails any statement: Wake on it succeeds
	// only if it runs none.
	closed, err := pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, closed.Rollback(ctx))
	start := time.Now()
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return rec.With(tx).Wake(ctx) }))
	second := rec.With(closed).Wake(ctx)
	if time.Since(start) < events.NotifySpacing {
		require.NoError(t, second, "a second wake-up within the spacing runs no statement")
	}
	n, err := listener.Conn().WaitForNotification(ctx)
	require.NoError(t, err)
	require.Equal(t, events.Channel, n.Channel)

	time.Sleep(events.NotifySpacing)
	require.Error(t, rec.With(closed).Wake(ctx), "past the spacing, Wake runs its statement")
}
