package faults

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/testdb"
)

// isolationHealthy, isolationSick: ten healthy endpoints (receivers that
// take 40 ms) beside five that hang until the sender's timeout and five that
// answer 500, all subscribed to every note.
const (
	isolationHealthy = 10
	isolationSick    = 5
	isolationRate    = 20 // notes a second
	isolationLatency = 40 * time.Millisecond
	isolationTimeout = 2 // seconds, the hanging endpoints' timeout
)

// isolationRun warms a fleet of replicas up on the healthy endpoints, then
// writes notes at isolationRate for dur, with the sick endpoints registered
// or not, and returns the healthy endpoints' commit-to-receipt latencies of
// those notes.
func isolationRun(t *testing.T, replicas int, sick bool, dur time.Duration) []time.Duration {
	t.Helper()
	ctx := context.Background()
	f := startFleet(t, testdb.NewURL(t), replicas, nil)
	a := f.owner(t)
	healthy := a.endpoints(t, "healthy", isolationHealthy, func(w http.ResponseWriter, _ *http.Request, _ int64) {
		time.Sleep(isolationLatency)
		w.WriteHeader(http.StatusNoContent)
	})
	// Both runs measure a warm fleet (pools, prepared statements, lanes),
	// so the servers' start-up is not counted as harm done by the sick
	// endpoints: the healthy endpoints receive 3 s of notes before the
	// measured ones, and the sick endpoints exist before the first
	// measured note is written.
	warm := writeNotesAt(t, a, "warm", isolationRate, 3*time.Second)
	waitReceived(t, healthy, warm)
	if sick {
		hanging := a.endpoints(t, "hanging", isolationSick, func(_ http.ResponseWriter, r *http.Request, _ int64) {
			<-r.Context().Done()
		})
		for _, ep := range hanging {
			require.NoError(t, a.Do(ctx, http.MethodPatch, "/api/admin/webhooks/"+ep.ServerID, map[string]any{"timeout_seconds": isolationTimeout}, nil))
		}
		a.endpoints(t, "failing", isolationSick, func(w http.ResponseWriter, _ *http.Request, _ int64) {
			w.WriteHeader(http.StatusInternalServerError)
		})
	}
	if diagnosing() {
		for _, ep := range a.Eps {
			t.Logf("endpoint %s %s", ep.ServerID, ep.URL)
		}
	}
	stop := logLines(t, f.Pool, sick)
	commits := writeNotesAt(t, a, "iso", isolationRate, dur)
	stop()
	waitReceived(t, healthy, commits)
	logWork(t, f.Pool, sick)

	rs := receipts(healthy, commits)
	lat := make([]time.Duration, len(rs))
	for i, r := range rs {
		lat[i] = r.latency
	}
	logSeconds(t, rs, sick)
	logPhases(t, f.Pool, rs, sick)
	// The replicas stop with their run, not with the test, so each run
	// shares the machine with no fleet but its own.
	f.stop()
	return lat
}

// diagnosing reports whether STANDMEET_FAULTS_DIAG asks the isolation
// test to log what work its deliveries took ("work") and, for any other
// value, where they wait every second (a read that itself slows the run).
func diagnosing() bool { return os.Getenv("STANDMEET_FAULTS_DIAG") != "" }

// diagnosingLines reports whether the per-second read of logLines is on.
func diagnosingLines() bool { return diagnosing() && os.Getenv("STANDMEET_FAULTS_DIAG") != "work" }

// receipt is one note received with a 2xx by a healthy endpoint (its
// server id) as the event event: when the note was committed, and how long
// after that it arrived.
type receipt struct {
	endpoint, event string
	committed       time.Time
	latency         time.Duration
}

// receipts are eps' receipts of the notes of commits.
func receipts(eps []*bench.SinkEndpoint, commits map[string]time.Time) []receipt {
	var out []receipt
	for _, ep := range eps {
		for _, ar := range ep.Arrivals() {
			if at, ok := commits[ar.Subject]; ok && ar.Valid && ar.Status/100 == 2 {
				out = append(out, receipt{endpoint: ep.ServerID, event: ar.ID, committed: at, latency: ar.At.Sub(at)})
			}
		}
	}
	return out
}

// firstCommit is the earliest commit of rs (not empty).
func firstCommit(rs []receipt) time.Time {
	return slices.MinFunc(rs, func(a, b receipt) int { return a.committed.Compare(b.committed) }).committed
}

// logSeconds, with STANDMEET_FAULTS_DIAG set, logs the receipts' p50, p99
// and maximum latency per second of commits: when in the run the latency a
// p99 reports came.
func logSeconds(t *testing.T, rs []receipt, sick bool) {
	t.Helper()
	if !diagnosing() || len(rs) == 0 {
		return
	}
	first := firstCommit(rs)
	var per [][]time.Duration
	for _, r := range rs {
		s := int(r.committed.Sub(first) / time.Second)
		for len(per) <= s {
			per = append(per, nil)
		}
		per[s] = append(per[s], r.latency)
	}
	for s, l := range per {
		if len(l) > 0 {
			t.Logf("sick=%v second %2d: healthy p50/p99/max %v/%v/%v", sick, s, percentile(l, 0.5).Round(time.Millisecond),
				percentile(l, 0.99).Round(time.Millisecond), percentile(l, 1).Round(time.Millisecond))
		}
	}
}

// logLines, with STANDMEET_FAULTS_DIAG set, logs every second until stop
// is called, per endpoint (named by its receiver), River's states of its
// unfinished deliveries with their queues: where a healthy endpoint's
// backlog waits (available and not fetched, running in a worker, snoozed)
// and who holds the workers. It reads
// only, one statement a second.
func logLines(t *testing.T, pool *pgxpool.Pool, sick bool) (stop func()) {
	t.Helper()
	if !diagnosingLines() {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			<-finished
		})
	}
	// A test that fails before its caller stops it must not log after it
	// has ended.
	t.Cleanup(stop)
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for s := 1; ; s++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			rows, err := pool.Query(context.Background(), `
SELECT split_part(e.url, '/e/', 2),
  COALESCE((SELECT string_agg(st || ':' || n, ' ' ORDER BY st) FROM (
    SELECT CASE WHEN j.scheduled_at > now() THEN 'scheduled' ELSE j.state::text END AS st, count(*) AS n
    FROM river_job j WHERE j.kind = 'webhook.deliver' AND j.args->>'endpoint_id' = e.id::text
      AND j.state NOT IN ('completed', 'cancelled', 'discarded') GROUP BY 1) c), ''),
  COALESCE((SELECT string_agg(DISTINCT j.queue, ',') FROM river_job j
    WHERE j.kind = 'webhook.deliver' AND j.args->>'endpoint_id' = e.id::text AND j.state IN ('available', 'running')), '')
FROM webhook_endpoints e ORDER BY 1`)
			if err != nil {
				t.Logf("lines at %d s: %v", s, err)
				continue
			}
			var name, states, queues string
			_, err = pgx.ForEachRow(rows, []any{&name, &states, &queues}, func() error {
				t.Logf("sick=%v %2d s %-10s River: %s [%s]", sick, s, name, states, queues)
				return nil
			})
			if err != nil {
				t.Logf("lines at %d s: %v", s, err)
			}
		}
	}()
	return stop
}

// logWork, with STANDMEET_FAULTS_DIAG set, logs per kind of endpoint the
// River work its deliveries took: jobs, runs (attempts and snoozes) and
// attempts recorded.
func logWork(t *testing.T, pool *pgxpool.Pool, sick bool) {
	t.Helper()
	if !diagnosing() {
		return
	}
	rows, err := pool.Query(context.Background(), `
WITH k AS (SELECT id, split_part(split_part(url, '/e/', 2), '-', 1) AS kind FROM webhook_endpoints),
j AS (SELECT k.kind, j.attempt, j.state, COALESCE((j.metadata->>'snoozes')::int, 0) AS snoozes
  FROM river_job j JOIN k ON j.args->>'endpoint_id' = k.id::text WHERE j.kind = 'webhook.deliver')
SELECT j.kind, count(*), sum(j.attempt), sum(j.snoozes),
  string_agg(DISTINCT j.state::text, ',') || ' by snoozes ' || (SELECT string_agg(n || ':' || c, ' ' ORDER BY n) FROM (
    SELECT LEAST(h.snoozes, 5) AS n, count(*) AS c FROM j h WHERE h.kind = j.kind GROUP BY 1) h),
  (SELECT count(*) FROM webhook_attempts a JOIN k k2 ON k2.id = a.endpoint_id WHERE k2.kind = j.kind)
FROM j GROUP BY 1 ORDER BY 1`)
	require.NoError(t, err)
	var kind, states string
	var jobs, attempts, snoozes, recorded int64
	_, err = pgx.ForEachRow(rows, []any{&kind, &jobs, &attempts, &snoozes, &states, &recorded}, func() error {
		t.Logf("sick=%v work %-8s %d jobs, %d attempts, %d snoozes, %d attempts recorded (%s)", sick, kind, jobs, attempts, snoozes, recorded, states)
		return nil
	})
	require.NoError(t, err)
}

// logPhases, with STANDMEET_FAULTS_DIAG set, logs where the slowest of
// rs spent their time, from River's rows of their fan-out and
// delivery jobs: commit to the relay's insert of the fan-out (relay), to
// the fan-out's start (fan-out wait), to its insert of the delivery
// (fan-out run), to the delivery's last start (delivery wait), to the
// receipt (claim and POST). River's created_at is its inserting
// transaction's start, so each phase is within a transaction's length.
func logPhases(t *testing.T, pool *pgxpool.Pool, rs []receipt, sick bool) {
	t.Helper()
	if !diagnosing() || len(rs) == 0 {
		return
	}
	type key struct{ ep, ev string }
	type phases struct {
		fanCreated, fanStarted, created, started, posted time.Time
		attempt, snoozes                                 int
	}
	var ids []string
	for _, r := range rs {
		if !slices.Contains(ids, r.endpoint) {
			ids = append(ids, r.endpoint)
		}
	}
	rows, err := pool.Query(context.Background(), `
SELECT d.args->>'endpoint_id', d.args->>'event_id', f.created_at, f.attempted_at, d.created_at, d.attempted_at,
  a.attempted_at, d.attempt, COALESCE((d.metadata->>'snoozes')::int, 0)
FROM river_job d JOIN river_job f ON f.kind = 'webhook.fanout' AND f.args->>'event_id' = d.args->>'event_id'
JOIN webhook_attempts a ON a.job_id = d.id AND a.outcome = 'completed'
WHERE d.kind = 'webhook.deliver' AND d.state = 'completed' AND d.args->>'endpoint_id' = ANY($1)`, ids)
	require.NoError(t, err)
	got := map[key]phases{}
	var k key
	var p phases
	_, err = pgx.ForEachRow(rows, []any{&k.ep, &k.ev, &p.fanCreated, &p.fanStarted, &p.created, &p.started, &p.posted, &p.attempt, &p.snoozes}, func() error {
		got[k] = p
		return nil
	})
	require.NoError(t, err)
	first := firstCommit(rs)
	t.Logf("sick=%v first commit at %s", sick, first.Format("15:04:05.000"))
	slow := slices.Clone(rs)
	slices.SortFunc(slow, func(a, b receipt) int { return int(b.latency - a.latency) })
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	for _, r := range slow[:min(len(slow), 25)] {
		p, ok := got[key{r.endpoint, r.event}]
		if !ok {
			continue
		}
		arrived := r.committed.Add(r.latency)
		t.Logf("sick=%v slow %v at %.1f s: relay %d, fan-out wait %d, run %d, delivery wait %d, claim+send %d ms; answered %d ms after (attempt %d, %d snoozes)",
			sick, r.latency.Round(time.Millisecond), r.committed.Sub(first).Seconds(),
			ms(p.fanCreated.Sub(r.committed)), ms(p.fanStarted.Sub(p.fanCreated)), ms(p.created.Sub(p.fanStarted)),
			ms(p.started.Sub(p.created)), ms(arrived.Sub(p.started)), ms(p.posted.Sub(arrived)), p.attempt, p.snoozes)
	}
}

// writeNotesAt writes notes named prefix-i at rate for dur and returns
// each one's URI with its commit time.
func writeNotesAt(t *testing.T, a *tenant, prefix string, rate int, dur time.Duration) map[string]time.Time {
	t.Helper()
	var (
		mu      sync.Mutex
		commits = map[string]time.Time{}
		wg      sync.WaitGroup
	)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(dur)
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		wg.Go(func() {
			slug := fmt.Sprintf("%s-%d", prefix, i)
			n, at, err := a.CreateNote(context.Background(), slug, slug)
			if err != nil {
				t.Errorf("write note %s: %v", slug, err)
				return
			}
			mu.Lock()
			commits[n.URI] = at
			mu.Unlock()
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	return commits
}

// waitReceived waits until every endpoint of eps has received every note
// of commits with a 2xx.
func waitReceived(t *testing.T, eps []*bench.SinkEndpoint, commits map[string]time.Time) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, ep := range eps {
			got := 0
			for _, ar := range ep.Arrivals() {
				if _, ok := commits[ar.Subject]; ok && ar.Valid && ar.Status/100 == 2 {
					got++
				}
			}
			if got < len(commits) {
				return false
			}
		}
		return true
	}, 3*time.Minute, 200*time.Millisecond, "the healthy endpoints did not receive every note")
}

func percentile(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// TestFaultSickEndpointsDoNotDelayHealthyOnes: while five endpoints hang
// until their timeout and five answer 500, ten healthy endpoints fed 20
// notes a second keep their commit-to-receipt p99 within 1.5 times (plus
// 50 ms) that of the same run without the sick endpoints, on one process
// and on three. A delivery that waits for its endpoint's lease gives its
// River worker back once its wait is hopeless, so the sick endpoints'
// waiting deliveries cannot fill the workers the healthy ones need.
func TestFaultSickEndpointsDoNotDelayHealthyOnes(t *testing.T) {
	skipUnlessFull(t, "two 20-second runs per replica count, compared by their p99")
	for _, replicas := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d replicas", replicas), func(t *testing.T) {
			dur := 20 * time.Second
			alone := isolationRun(t, replicas, false, dur)
			beside := isolationRun(t, replicas, true, dur)
			p99Alone, p99Beside := percentile(alone, 0.99), percentile(beside, 0.99)
			t.Logf("%d replicas: healthy p50/p99 alone %v/%v, beside the sick endpoints %v/%v (%d and %d receipts)", replicas,
				percentile(alone, 0.5), p99Alone, percentile(beside, 0.5), p99Beside, len(alone), len(beside))
			bound := p99Alone*3/2 + 50*time.Millisecond
			require.LessOrEqual(t, p99Beside, bound, "the sick endpoints delayed the healthy ones")
		})
	}
}
