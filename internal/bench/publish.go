package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/infra/events"
)

// publishEnv lifts the per-key publish limits on the bench's servers, so
// the publish workload measures the API, not the limiter.
var publishEnv = map[string]string{"STANDMEET_PUBLISH_RATE": "1000000", "STANDMEET_PUBLISH_BYTES_RATE": "1073741824"}

const (
	publishWorkers      = 16
	publishBatchWorkers = 4
	publishBatchSize    = 100
)

// publishEvent is one booking.created event of the publish workload.
func publishEvent(run string, i int) string {
	return fmt.Sprintf(`{"type":"booking.created","subject":"booking://%s-%d","data":{"booking_id":"%s-%d","starts_at":"2026-12-08T09:30:00Z"}}`,
		run, i, run, i)
}

// runPublish measures events.publish through the API: events published one
// per request by 16 clients, and in batches of 100 by 4 clients, each
// beside the relay's rate of events recorded and fanned out in the same run.
func (b *ServerBench) runPublish(ctx context.Context) error {
	a, err := b.NewOwner(ctx, "publish")
	if err != nil {
		return err
	}
	ceiling, err := b.relayCeiling(ctx)
	if err != nil {
		return err
	}
	run := uuid.NewString()[:8]
	post := func(path, body string) (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, b.base()+path, strings.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a.Key)
		}
		return req, err
	}

	n := b.o.scale(5000)
	since := time.Now()
	single := Load(ctx, NewClient(publishWorkers), n, publishWorkers, func(i int) (*http.Request, error) {
		return post("/api/admin/events", publishEvent(run+"s", i))
	})
	accepted := single.Statuses[http.StatusAccepted]
	b.r.Add(Figure{Key: "publish_single_events_per_s", Label: "publish API, 1 event per request, 16 clients", Unit: "/s",
		Value: float64(accepted) / single.Elapsed.Seconds(), Ceiling: "relay: events recorded and fanned out", CeilingValue: ceiling})
	b.r.Extra["publish_single_p50_ms"] = Ms(single.Latency.Percentile(50))
	b.r.Extra["publish_single_p99_ms"] = Ms(single.Latency.Percentile(99))
	if accepted != n {
		b.Problem("publish single: %d of %d accepted (statuses %v, %d transport errors)", accepted, n, single.Statuses, single.Errors)
	}

	batches := max(b.o.scale(200), 1)
	batched := Load(ctx, NewClient(publishBatchWorkers), batches, publishBatchWorkers, func(i int) (*http.Request, error) {
		items := make([]string, publishBatchSize)
		for j := range items {
			items[j] = publishEvent(run+"b", i*publishBatchSize+j)
		}
		return post("/api/admin/events/batch", `{"events":[`+strings.Join(items, ",")+`]}`)
	})
	okBatches := batched.Statuses[http.StatusAccepted]
	b.r.Add(Figure{Key: "publish_batch_events_per_s", Label: "publish API, batches of 100, 4 clients", Unit: "/s",
		Value: float64(okBatches*publishBatchSize) / batched.Elapsed.Seconds(), Ceiling: "relay: events recorded and fanned out", CeilingValue: ceiling})
	b.r.Extra["publish_batch_p50_ms"] = Ms(batched.Latency.Percentile(50))
	b.r.Extra["publish_batch_p99_ms"] = Ms(batched.Latency.Percentile(99))
	if okBatches != batches {
		b.Problem("publish batch: %d of %d batches accepted (statuses %v, %d transport errors)", okBatches, batches, batched.Statuses, batched.Errors)
	}

	// Every published event is fanned out by the relay like any other.
	want := accepted + okBatches*publishBatchSize
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var fanned int
		var last *time.Time
		if err := b.Pool.QueryRow(ctx, `SELECT count(*), max(fanned_out_at) FROM events
WHERE type = 'booking.created' AND subject LIKE $1 AND fanned_out_at IS NOT NULL`, "booking://"+run+"%").Scan(&fanned, &last); err != nil {
			return err
		}
		if fanned >= want && last != nil {
			b.r.Extra["publish_fanned_out_per_s"] = float64(want) / last.Sub(since).Seconds()
			b.r.Note("publish: %d events published, all fanned out %.1f s after the first request", want, last.Sub(since).Seconds())
			return nil
		}
		if time.Now().After(deadline) {
			b.Problem("publish: only %d of %d published events fanned out after 2 min", fanned, want)
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// relayCeiling is the relay figure of this run, measured now on a fresh
// database when the relay step did not run.
func (b *ServerBench) relayCeiling(ctx context.Context) (float64, error) {
	for _, f := range b.r.Figures {
		if f.Key == "relay_events_per_s" {
			return f.Value, nil
		}
	}
	dbURL, err := FreshDatabase(ctx, b.o.AdminURL, "standmeet_bench_relay")
	if err != nil {
		return 0, err
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return 0, err
	}
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	res, err := events.RelayBench(ctx, pool, b.o.scale(20000))
	if err != nil {
		return 0, err
	}
	b.r.Extra["publish_relay_ceiling_per_s"] = res.EventsPerSec
	return res.EventsPerSec, nil
}
