package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// publishEnv lifts the per-key publish limits on the bench's servers, so
// the publish workload measures the API, not the limiter.
var publishEnv = map[string]string{"STANDMEET_PUBLISH_RATE": "1000000", "STANDMEET_PUBLISH_BYTES_RATE": "1073741824"}

const (
	publishWorkers      = 16
	publishBatchWorkers = 4
	publishBatchSize    = 100
)

// publishEvent is event i of run, a booking.created of the publish
// workload about publishSubject(run, i).
func publishEvent(run string, i int) string {
	return fmt.Sprintf(`{"type":"booking.created","subject":%q,"data":{"booking_id":"%s-%d","starts_at":"2026-12-08T09:30:00Z"}}`,
		publishSubject(run, i), run, i)
}

// publishSubject is the subject of event i of run.
func publishSubject(run string, i int) string { return fmt.Sprintf("booking://%s-%d", run, i) }

// publishBatch is the body of a batch publish of run's events first to
// last-1.
func publishBatch(run string, first, last int) string {
	items := make([]string, 0, last-first)
	for i := first; i < last; i++ {
		items = append(items, publishEvent(run, i))
	}
	return `{"events":[` + strings.Join(items, ",") + `]}`
}

// runPublish measures events.publish through the API: events published one
// per request by 16 clients, and in batches of 100 by 4 clients, each
// beside the relay's rate of events recorded and fanned out in the same run.
// Each phase waits until the relay has fanned out its events and counts the
// River jobs queued per event over the phase (the fan-outs of the bus's
// subscribers).
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
	phase := func(key, label string, requests, workers, perRequest int, build func(i int) (*http.Request, error)) error {
		var since time.Time
		if err := b.Pool.QueryRow(ctx, `SELECT now()`).Scan(&since); err != nil {
			return err
		}
		res := Load(ctx, NewClient(workers), requests, workers, build)
		ok := res.Statuses[http.StatusAccepted]
		b.r.Add(Figure{Key: key + "_events_per_s", Label: label, Unit: "/s",
			Value: float64(ok*perRequest) / res.Elapsed.Seconds(), Ceiling: "relay: events recorded and fanned out", CeilingValue: ceiling})
		b.r.Extra[key+"_p50_ms"] = Ms(res.Latency.Percentile(50))
		b.r.Extra[key+"_p99_ms"] = Ms(res.Latency.Percentile(99))
		if ok != requests {
			b.Problem("%s: %d of %d requests accepted (statuses %v, %d transport errors)", key, ok, requests, res.Statuses, res.Errors)
		}
		last, err := b.waitFannedOut(ctx, "booking://"+run+key+"-%", ok*perRequest)
		if err != nil {
			return err
		}
		if last.IsZero() {
			return nil
		}
		b.r.Extra[key+"_fanned_out_per_s"] = float64(ok*perRequest) / last.Sub(since).Seconds()
		var jobs int
		if err := b.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE created_at >= $1`, since).Scan(&jobs); err != nil {
			return err
		}
		if ok > 0 {
			b.r.Extra[key+"_river_jobs_per_event"] = float64(jobs) / float64(ok*perRequest)
		}
		return nil
	}

	n := b.o.scale(5000)
	if err := phase("publish_single", "publish API, 1 event per request, 16 clients", n, publishWorkers, 1, func(i int) (*http.Request, error) {
		return post("/api/admin/events", publishEvent(run+"publish_single", i))
	}); err != nil {
		return err
	}
	batches := max(b.o.scale(200), 1)
	return phase("publish_batch", "publish API, batches of 100, 4 clients", batches, publishBatchWorkers, publishBatchSize, func(i int) (*http.Request, error) {
		return post("/api/admin/events/batch", publishBatch(run+"publish_batch", i*publishBatchSize, (i+1)*publishBatchSize))
	})
}

// PublishEvents publishes n booking.created events of a's owner through
// the publish API, in batches of publishBatchSize by publishBatchWorkers
// clients, their subjects booking://run-0 … booking://run-(n-1), and
// records each event's subject with the time its batch was answered (after
// its transaction committed) into into.
func PublishEvents(ctx context.Context, a *Admin, run string, n int, into *Commits) error {
	var next atomic.Int64
	errs := make(chan error, publishBatchWorkers)
	var wg sync.WaitGroup
	for range publishBatchWorkers {
		wg.Go(func() {
			for {
				first := int(next.Add(publishBatchSize)) - publishBatchSize
				if first >= n || ctx.Err() != nil {
					return
				}
				last := min(first+publishBatchSize, n)
				body := json.RawMessage(publishBatch(run, first, last))
				if err := a.Do(ctx, http.MethodPost, "/api/admin/events/batch", body, nil); err != nil {
					errs <- fmt.Errorf("publish events %d-%d: %w", first, last-1, err)
					next.Store(int64(n))
					return
				}
				at := time.Now()
				for i := first; i < last; i++ {
					into.add(publishSubject(run, i), at)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// waitFannedOut waits until want events whose subject is LIKE pattern are
// fanned out and returns when the last was; a shortfall after two minutes
// is a problem of the run (and the zero time).
func (b *ServerBench) waitFannedOut(ctx context.Context, pattern string, want int) (time.Time, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var fanned int
		var last *time.Time
		if err := b.Pool.QueryRow(ctx, `SELECT count(*), max(fanned_out_at) FROM events
WHERE type = 'booking.created' AND subject LIKE $1 AND fanned_out_at IS NOT NULL`, pattern).Scan(&fanned, &last); err != nil {
			return time.Time{}, err
		}
		if fanned >= want && last != nil {
			return *last, nil
		}
		if time.Now().After(deadline) {
			b.Problem("publish: only %d of %d published events (%s) fanned out after 2 min", fanned, want, pattern)
			return time.Time{}, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// relayCeiling returns the relay figure of the report (the relay step runs
// on the work's database before the servers start); without one (-only),
// it measures the relay on a database of its own, since the servers'
// relays would claim its events on theirs.
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
	res, err := relayBench(ctx, pool, b.o.scale(20000))
	if err != nil {
		return 0, err
	}
	b.r.Extra["publish_relay_ceiling_per_s"] = res.EventsPerSec
	return res.EventsPerSec, nil
}
