package events_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/standmeet/standmeet/internal/infra/events"
)

// Two subscriber kinds with workers, as a domain would register them: their
// args have the relay's {"event_id"} shape.
type sinkArgs struct{ events.EventJobArgs }

func (sinkArgs) Kind() string { return "test.sink" }

type otherArgs struct{ events.EventJobArgs }

func (otherArgs) Kind() string { return "test.other" }

type sinkWorker struct{ river.WorkerDefaults[sinkArgs] }

func (sinkWorker) Work(context.Context, *river.Job[sinkArgs]) error { return nil }

type otherWorker struct {
	river.WorkerDefaults[otherArgs]
}

func (otherWorker) Work(context.Context, *river.Job[otherArgs]) error { return nil }

// newPool opens a pool of its own on the database at url (a replica has its
// own pool).
func newPool(t *testing.T, url string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// riverConfig returns a fast-polling client configuration (FetchCooldown 10 ms,
// FetchPollInterval 50 ms) with the test workers, and extra workers registered
// by add.
func riverConfig(add func(*river.Workers)) *river.Config {
	workers := river.NewWorkers()
	river.AddWorker(workers, sinkWorker{})
	river.AddWorker(workers, otherWorker{})
	if add != nil {
		add(workers)
	}
	return &river.Config{
		Workers:           workers,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		TestOnly:          true,
	}
}

// newRiverClient builds a River client (not started: the relay only
// inserts) whose workers are the test sinks.
func newRiverClient(t *testing.T, pool *pgxpool.Pool) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := river.NewClient(riverpgxv5.New(pool), riverConfig(nil))
	require.NoError(t, err)
	return client
}

func testLogger(t *testing.T) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
}

// listJobs lists, through River's client, every job of the given kinds
// (every kind when none is given), in every state, oldest first.
func listJobs(t *testing.T, pool *pgxpool.Pool, kinds ...string) []*rivertype.JobRow {
	t.Helper()
	const page = 1000
	client := newRiverClient(t, pool)
	params := river.NewJobListParams().First(page)
	if len(kinds) > 0 {
		params = params.Kinds(kinds...)
	}
	var out []*rivertype.JobRow
	for {
		res, err := client.JobList(context.Background(), params)
		require.NoError(t, err)
		out = append(out, res.Jobs...)
		if len(res.Jobs) < page {
			return out
		}
		params = params.After(res.LastCursor)
	}
}

// eventOf is the event a subscriber's job is about.
func eventOf(t *testing.T, j *rivertype.JobRow) uuid.UUID {
	t.Helper()
	var args events.EventJobArgs
	require.NoError(t, json.Unmarshal(j.EncodedArgs, &args), "args of job %d", j.ID)
	return args.EventID
}

// record commits one event in its own transaction.
func record(t *testing.T, pool *pgxpool.Pool, rec *events.Recorder, owner uuid.UUID, eventType string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		id, err = rec.With(tx).Record(context.Background(), owner, eventType, "s", map[string]any{})
		return err
	}))
	return id
}

// fanOutCounter is an OnFanOut hook that closes done once want events have
// been fanned out in total (across every relay it is given to).
type fanOutCounter struct {
	mu   sync.Mutex
	n    int
	want int
	done chan struct{}
}

func newFanOutCounter(want int) *fanOutCounter {
	return &fanOutCounter{want: want, done: make(chan struct{})}
}

func (c *fanOutCounter) hook(ids []uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.n
	c.n += len(ids)
	if before < c.want && c.n >= c.want {
		close(c.done)
	}
}

func (c *fanOutCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait fails the test when the count is not reached within d.
func (c *fanOutCounter) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		t.Fatalf("only %d of %d events fanned out within %s", c.count(), c.want, d)
	}
}
