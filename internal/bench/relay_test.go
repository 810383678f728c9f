package bench

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// TestRelayBench runs the `make bench` measurement small: it must complete
// (every event fanned out), leave nothing behind, and refuse a database that
// a real bus is using.
func TestRelayBench(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(testdb.NewURL(t))
	require.NoError(t, err)
	cfg.MaxConns = 12
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	r, err := relayBench(ctx, pool, 2000)
	require.NoError(t, err)
	require.Positive(t, r.EventsPerSec)
	require.Positive(t, r.InsertPerSec)
	t.Logf("relay bench, 2000 events, 8 writers: recorded+fanned out %.0f/s, recorded %.0f/s, bare INSERT %.0f/s (ratio %.2f); commit-to-fan-out p50 %s p99 %s",
		r.EventsPerSec, r.RecordPerSec, r.InsertPerSec, r.EventsPerSec/r.InsertPerSec, r.FanOutP50, r.FanOutP99)
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&left))
	require.Zero(t, left, "the bench cleans up")

	_, err = pool.Exec(ctx, `INSERT INTO events (owner_id, type) VALUES (gen_random_uuid(), 'real.event')`)
	require.NoError(t, err)
	_, err = relayBench(ctx, pool, 10)
	require.ErrorContains(t, err, "scratch database")
}

// BenchmarkRelay reports recorded-and-fanned-out events/s beside the bare
// INSERT rate (go test -bench Relay -run '^$').
func BenchmarkRelay(b *testing.B) {
	pool := testdb.New(b)
	n := max(b.N, 1000)
	b.ResetTimer()
	r, err := relayBench(context.Background(), pool, n)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.EventsPerSec, "events/s")
	b.ReportMetric(r.InsertPerSec, "inserts/s")
	b.ReportMetric(r.EventsPerSec/r.InsertPerSec, "ratio")
}
