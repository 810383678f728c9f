package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// full reports whether the full fault tests run (make test-faults sets
// STANDMEET_FAULTS=full); otherwise go test runs the bounded version.
func full() bool { return os.Getenv("STANDMEET_FAULTS") != "" }

// size picks the bounded or the full size of a workload.
func size(bounded, fullSize int) int {
	if full() {
		return fullSize
	}
	return bounded
}

// skipUnlessFull skips the heaviest tests in the bounded run, saying how to
// run them.
func skipUnlessFull(t *testing.T, why string) {
	t.Helper()
	if !full() {
		t.Skipf("%s; run the full fault tests with `make test-faults` (STANDMEET_FAULTS=full)", why)
	}
}

// binDir holds the server binary built for this test process.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		if err := os.RemoveAll(binDir); err != nil {
			fmt.Fprintln(os.Stderr, "faults: remove the server binary:", err)
		}
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// serverBinary returns STANDMEET_BIN, or builds ./cmd/server once per test
// process. A scratch binary (say, with the lease broken on purpose) is
// tested by pointing STANDMEET_BIN at it.
func serverBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("STANDMEET_BIN"); b != "" {
		return b
	}
	buildOnce.Do(func() {
		root, err := bench.ModuleRoot()
		if err != nil {
			buildErr = err
			return
		}
		if binDir, err = os.MkdirTemp("", "standmeet-faults-bin"); err != nil {
			buildErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		builtBin, buildErr = bench.BuildServer(ctx, root, binDir)
	})
	require.NoError(t, buildErr)
	return builtBin
}

// fleet is a set of server replicas on one database, a sink of receivers
// and a pool for looking at River's and the bus's rows.
type fleet struct {
	t    *testing.T
	opts bench.ServerOptions
	Sink *bench.Sink
	Pool *pgxpool.Pool

	mu      sync.Mutex
	servers []*bench.Server // nil while a replica is down
	rr      atomic.Uint64
	emails  atomic.Int64
}

// startFleet starts replicas server processes on dbURL with env added to
// their configuration. Everything stops when the test ends.
func startFleet(t *testing.T, dbURL string, replicas int, env map[string]string) *fleet {
	t.Helper()
	ctx := context.Background()
	sink, err := bench.StartSink("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sink.Close()) })
	pool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	e := map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}
	for k, v := range env {
		e[k] = v
	}
	f := &fleet{t: t, Sink: sink, Pool: pool, opts: bench.ServerOptions{
		Binary:      serverBinary(t),
		DatabaseURL: dbURL,
		MasterKey:   bench.NewMasterKey(),
		Env:         e,
		LogPath:     logPath(t),
	}}
	f.servers = make([]*bench.Server, replicas)
	for i := range f.servers {
		s, err := bench.StartServer(ctx, f.opts)
		require.NoError(t, err)
		f.servers[i] = s
	}
	t.Cleanup(f.stop)
	return f
}

// stop kills every replica still running and leaves them down.
func (f *fleet) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, s := range f.servers {
		if s != nil {
			if err := s.Kill(); err != nil {
				f.t.Logf("kill replica %d: %v", i, err)
			}
			f.servers[i] = nil
		}
	}
}

// fleetsOf counts the fleets each test has started, so that a test with two
// fleets keeps a log of each.
var fleetsOf = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// logPath keeps the server logs of a failed test where one can read them:
// the test's first fleet logs to standmeet-faults-<test>.log, its second to
// standmeet-faults-<test>_2.log, and so on.
func logPath(t *testing.T) string {
	dir := os.Getenv("STANDMEET_FAULTS_LOGS")
	if dir == "" {
		dir = os.TempDir()
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	fleetsOf.Lock()
	fleetsOf.n[name]++
	if n := fleetsOf.n[name]; n > 1 {
		name = fmt.Sprintf("%s_%d", name, n)
	}
	fleetsOf.Unlock()
	p := fmt.Sprintf("%s/standmeet-faults-%s.log", dir, name)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("remove the last run's server log: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server logs: %s", p)
		} else if err := os.Remove(p); err != nil {
			t.Logf("remove the server log %s: %v", p, err)
		}
	})
	return p
}

// live returns the running replicas.
func (f *fleet) live() []*bench.Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*bench.Server
	for _, s := range f.servers {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// base picks a live replica, round robin.
func (f *fleet) base() string {
	live := f.live()
	if len(live) == 0 {
		return "http://127.0.0.1:1"
	}
	return live[int(f.rr.Add(1))%len(live)].URL
}

// kill sends kill -9 to replica i and leaves it down.
func (f *fleet) kill(i int) {
	f.mu.Lock()
	s := f.servers[i]
	f.servers[i] = nil
	f.mu.Unlock()
	if s != nil {
		if err := s.Kill(); err != nil {
			f.t.Logf("kill replica %d: %v", i, err)
		}
	}
}

// restart starts replica i again (a new process, a new port).
func (f *fleet) restart(ctx context.Context, i int) error {
	s, err := bench.StartServer(ctx, f.opts)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.servers[i] = s
	f.mu.Unlock()
	return nil
}

// tenant is an owner: its admin client, its id and the sink endpoints it
// registered. Events reach only their owner's endpoints, so what must
// arrive is counted per tenant.
type tenant struct {
	*bench.Admin
	ID  string
	Eps []*bench.SinkEndpoint
	f   *fleet
}

// owner creates an owner and an admin client spread over live replicas.
func (f *fleet) owner(t *testing.T) *tenant {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	email := fmt.Sprintf("faults-%d@example.com", f.emails.Add(1))
	key, err := bench.NewOwner(ctx, f.opts, email)
	require.NoError(t, err)
	var id string
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT id::text FROM owners WHERE lower(email) = lower($1)`, email).Scan(&id))
	return &tenant{Admin: &bench.Admin{BaseFunc: f.base, Key: key, HTTP: bench.NewClient(16)}, ID: id, f: f}
}

// endpoints registers n sink endpoints answering with respond.
func (tn *tenant) endpoints(t *testing.T, prefix string, n int, respond bench.Respond) []*bench.SinkEndpoint {
	t.Helper()
	eps := make([]*bench.SinkEndpoint, n)
	for i := range eps {
		eps[i] = tn.endpoint(t, fmt.Sprintf("%s-%d", prefix, i), respond)
	}
	return eps
}

// endpoint registers one sink endpoint for corpus.note.changed.
func (tn *tenant) endpoint(t *testing.T, name string, respond bench.Respond) *bench.SinkEndpoint {
	t.Helper()
	ep := tn.f.Sink.Endpoint(name, respond)
	created, err := tn.CreateWebhook(context.Background(), ep.URL, []string{"corpus.note.changed"})
	require.NoError(t, err)
	require.NoError(t, ep.SetSecret(created.Secret))
	ep.ServerID = created.ID
	tn.Eps = append(tn.Eps, ep)
	return ep
}

// tenants creates owners with n endpoints in all, at most perOwner each
// (the server's per-owner endpoint limit is 50).
func (f *fleet) tenants(t *testing.T, prefix string, n, perOwner int, respond bench.Respond) []*tenant {
	t.Helper()
	var out []*tenant
	for i := 0; i < n; i += perOwner {
		tn := f.owner(t)
		tn.endpoints(t, fmt.Sprintf("%s-%d", prefix, i/perOwner), min(perOwner, n-i), respond)
		out = append(out, tn)
	}
	return out
}

// writeNotes writes n published notes through the admin API with a few
// writers, stepping to another replica when one is down. A POST whose
// answer was lost may have committed: retrying it can add a note, which is
// fine because the events table, not this count, is what must arrive.
func writeNotes(t *testing.T, a *tenant, prefix string, n int) {
	t.Helper()
	require.NoError(t, tryWriteNotes(a, prefix, n))
}

// tryWriteNotes is writeNotes for goroutines other than the test's.
func tryWriteNotes(a *tenant, prefix string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var next atomic.Int64
	next.Store(-1)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i >= n {
					return
				}
				slug := fmt.Sprintf("%s-%d", prefix, i)
				var err error
				// Long enough to ride out a killed replica or a database
				// restart.
				for until := time.Now().Add(time.Minute); ; {
					if _, _, err = a.CreateNote(ctx, slug, slug); err == nil || isConflict(err) {
						err = nil
						break
					}
					if time.Now().After(until) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if err != nil {
					errs <- err
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func isConflict(err error) bool {
	var se *bench.StatusError
	return errors.As(err, &se) && se.Status == 409
}

// eventIDs lists the owner's corpus.note.changed events: what must arrive
// at each of its endpoints.
func eventIDs(t *testing.T, pool *pgxpool.Pool, ownerID string) []string {
	t.Helper()
	var ids []string
	// A connection may have died with a database restart: try again.
	err := retry(func() error {
		ids = ids[:0]
		rows, err := pool.Query(context.Background(),
			`SELECT id::text FROM events WHERE type = 'corpus.note.changed' AND owner_id = $1 ORDER BY seq`, ownerID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	require.NoError(t, err)
	return ids
}

// retry runs f until it succeeds, up to 5 times over a few seconds.
func retry(f func() error) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
	return err
}

// tally compares the events with what the endpoints received.
type tally struct {
	Expected, Lost, Duplicates, Invalid int
	// MaxInFlight is the sender's view (senderInFlight); SinkMaxInFlight
	// the sink's raw count.
	MaxInFlight, SinkMaxInFlight int64
	LostSample                   []string
	// Overlap describes the first pair of requests one endpoint served at
	// once, when any did.
	Overlap string
}

func (tl tally) String() string {
	s := fmt.Sprintf("expected %d (endpoint, event) pairs, lost %d, duplicates %d, bad signatures %d, max in flight per endpoint %d (sink's raw count %d)",
		tl.Expected, tl.Lost, tl.Duplicates, tl.Invalid, tl.MaxInFlight, tl.SinkMaxInFlight)
	if tl.Overlap != "" {
		s += "; first overlap the sink saw: " + tl.Overlap
	}
	return s
}

// hangupLag is how late the sink may notice that the sender hung up (Go's
// server sees the closed connection from a background read, on a busy
// machine some milliseconds after the fact).
const hangupLag = 50 * time.Millisecond

// senderInFlight is the most requests the sender had outstanding at one
// endpoint at once, from the sink's arrival and end times, where a request
// the sender abandoned (status 0: it timed out and closed the connection)
// ends up to hangupLag before the sink noticed, and never later than the
// sender's own timeout after it arrived (it was sent before it arrived, and
// a loaded machine's sink may notice the hang-up well after hangupLag; see
// docs/design/river.md). The sink's own count
// (MaxInFlight) includes that lag: a receiver still busy with a request its
// sender gave up on is not a second request in flight.
func senderInFlight(ars []bench.Arrival) int64 {
	type edge struct {
		at    time.Time
		delta int64
	}
	edges := make([]edge, 0, 2*len(ars))
	for _, a := range ars {
		end := a.Done
		if a.Status == 0 {
			end = end.Add(-hangupLag)
			if gaveUp := a.At.Add(delivery.HTTPTimeout); end.After(gaveUp) {
				end = gaveUp
			}
			if end.Before(a.At) {
				end = a.At
			}
		}
		edges = append(edges, edge{a.At, 1}, edge{end, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta // ends first
		}
		return edges[i].at.Before(edges[j].at)
	})
	var cur, peak int64
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

// overlap describes the first arrival at ep that found another request in
// flight, with the request(s) it overlapped.
func overlap(ep *bench.SinkEndpoint) string {
	ars := ep.Arrivals()
	for _, a := range ars {
		if a.InFlight < 2 {
			continue
		}
		desc := fmt.Sprintf("%s: %s arrived %s (answered %d)", ep.Name, a.ID, a.At.Format("15:04:05.000000"), a.Status)
		for _, b := range ars {
			if b.ID != a.ID && b.At.Before(a.At) && b.Done.After(a.At) {
				desc += fmt.Sprintf(" while %s was in flight since %s until %s (answered %d)",
					b.ID, b.At.Format("15:04:05.000000"), b.Done.Format("15:04:05.000000"), b.Status)
			}
		}
		return desc
	}
	return ""
}

func count(events []string, eps []*bench.SinkEndpoint) tally {
	var tl tally
	for _, ep := range eps {
		tl.MaxInFlight = max(tl.MaxInFlight, senderInFlight(ep.Arrivals()))
		tl.SinkMaxInFlight = max(tl.SinkMaxInFlight, ep.MaxInFlight())
		if tl.Overlap == "" && ep.MaxInFlight() > 1 {
			tl.Overlap = overlap(ep)
		}
		ok, invalid := verified2xx(ep)
		tl.Invalid += invalid
		for _, id := range events {
			tl.Expected++
			switch n := ok[id]; {
			case n == 0:
				tl.Lost++
				if len(tl.LostSample) < 5 {
					tl.LostSample = append(tl.LostSample, ep.ServerID+"/"+id)
				}
			case n > 1:
				tl.Duplicates += n - 1
			}
		}
	}
	return tl
}

// verified2xx counts, per webhook-id, the arrivals at ep that verified and
// were answered 2xx, and returns how many did not verify.
func verified2xx(ep *bench.SinkEndpoint) (ok map[string]int, invalid int) {
	ok = map[string]int{}
	for _, a := range ep.Arrivals() {
		switch {
		case !a.Valid:
			invalid++
		case a.Status/100 == 2:
			ok[a.ID]++
		}
	}
	return ok, invalid
}

// waitDelivered waits until every tenant's events reached every one of
// its endpoints (or limit passes) and returns the final tally.
func waitDelivered(t *testing.T, pool *pgxpool.Pool, tenants []*tenant, wantEvents int, limit time.Duration) tally {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		tl, short := countAll(t, pool, tenants, wantEvents)
		if (tl.Lost == 0 && short == 0) || time.Now().After(deadline) {
			if short > 0 {
				t.Errorf("%d tenants recorded fewer than %d events", short, wantEvents)
			}
			return tl
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// countAll tallies every tenant; short counts tenants with fewer than
// wantEvents events recorded.
func countAll(t *testing.T, pool *pgxpool.Pool, tenants []*tenant, wantEvents int) (tl tally, short int) {
	t.Helper()
	for _, tn := range tenants {
		events := eventIDs(t, pool, tn.ID)
		if len(events) < wantEvents {
			short++
		}
		one := count(events, tn.Eps)
		tl.Expected += one.Expected
		tl.Lost += one.Lost
		tl.Duplicates += one.Duplicates
		tl.Invalid += one.Invalid
		tl.MaxInFlight = max(tl.MaxInFlight, one.MaxInFlight)
		tl.SinkMaxInFlight = max(tl.SinkMaxInFlight, one.SinkMaxInFlight)
		if tl.Overlap == "" {
			tl.Overlap = one.Overlap
		}
		if len(tl.LostSample) < 5 {
			tl.LostSample = append(tl.LostSample, one.LostSample...)
		}
	}
	return tl, short
}

// explainLost logs River's row of each sampled lost delivery (endpoint
// id/event id), so a failure says whether the job is gone, stuck or
// waiting.
func explainLost(t *testing.T, pool *pgxpool.Pool, tl tally) {
	t.Helper()
	for _, pair := range tl.LostSample {
		ep, ev, _ := strings.Cut(pair, "/")
		jobs, err := listJobs(pool, river.NewJobListParams().Kinds(delivery.KindDeliver))
		if err != nil {
			t.Logf("lost %s: River's jobs not listed: %v", pair, err)
			continue
		}
		var job *rivertype.JobRow
		for _, j := range jobs {
			if ref, err := refOf(j); err == nil && ref.EndpointID.String() == ep && ref.EventID.String() == ev {
				job = j
			}
		}
		if job == nil {
			var fanned string
			if err := pool.QueryRow(context.Background(), `SELECT coalesce(fanned_out_at::text, 'not fanned out') FROM events WHERE id = $1`, ev).Scan(&fanned); err != nil {
				fanned = fmt.Sprintf("unknown (%v)", err)
			}
			t.Logf("lost %s: no delivery job; event fanned out at %s", pair, fanned)
			continue
		}
		errs := ""
		if b, err := json.Marshal(job.Errors); err == nil && len(job.Errors) > 0 {
			errs = string(b)
		}
		if len(errs) > 600 {
			errs = errs[len(errs)-600:]
		}
		t.Logf("lost %s: job %s, attempt %d, scheduled %s (%s from now), errors …%s", pair, job.State, job.Attempt,
			job.ScheduledAt.Format(time.RFC3339Nano), time.Until(job.ScheduledAt).Round(time.Millisecond), errs)
	}
}

// jobStates counts River jobs by state.
func jobStates(t *testing.T, pool *pgxpool.Pool) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := retry(func() error {
		clear(out)
		jobs, err := listJobs(pool, river.NewJobListParams())
		if err != nil {
			return err
		}
		for _, j := range jobs {
			out[string(j.State)]++
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// requireNothingRunning waits (up to limit, for River's rescuer) until no
// job of the delivery path (webhook.*, corpus.*) is left running. Other
// kinds are only logged: the rescuer leaves a job alone until its kind's own
// timeout has passed, ten minutes for events.prune, which a replica killed
// at start may leave running.
func requireNothingRunning(t *testing.T, pool *pgxpool.Pool, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		running := map[string]int{}
		err := retry(func() error {
			clear(running)
			jobs, err := listJobs(pool, river.NewJobListParams().States(rivertype.JobStateRunning))
			if err != nil {
				return err
			}
			for _, j := range jobs {
				running[j.Kind]++
			}
			return nil
		})
		require.NoError(t, err)
		stuck := 0
		for kind, n := range running {
			if strings.HasPrefix(kind, "webhook.") || strings.HasPrefix(kind, "corpus.") {
				stuck += n
			}
		}
		if stuck == 0 {
			if len(running) > 0 {
				t.Logf("still running, outside the delivery path: %v", running)
			}
			return
		}
		if time.Now().After(deadline) {
			require.Failf(t, "jobs left running", "after %s: %v", limit, running)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// countingListener accepts TCP connections on a loopback address and counts
// them: a target the server must never dial.
type countingListener struct {
	ln    net.Listener
	Addr  string
	conns atomic.Int64
}

func listenCounting(t *testing.T, addr string) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	c := &countingListener{ln: ln, Addr: ln.Addr().String()}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return c
}

func TestSenderInFlightEndsAnAbandonedRequestAtTheSendersTimeout(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 10, 25, 50, 0, time.UTC)
	// A sink that notices the hang-up 165 ms after the sender's timeout.
	abandoned := bench.Arrival{ID: "a", At: t0, Done: t0.Add(delivery.HTTPTimeout + 165*time.Millisecond)}
	cases := []struct {
		name string
		next time.Duration
		want int64
	}{
		{"next request after the sender gave up", delivery.HTTPTimeout + 105*time.Millisecond, 1},
		{"next request while the first was really in flight", delivery.HTTPTimeout / 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			next := bench.Arrival{ID: "b", At: t0.Add(c.next), Done: t0.Add(c.next + 5*time.Millisecond), Status: 200}
			require.Equal(t, c.want, senderInFlight([]bench.Arrival{abandoned, next}))
		})
	}
}

// explainDuplicates logs where the duplicates the sink counted come from
// and returns how many of each: again, a request answered 2xx, recorded as
// completed, and posted again anyway (its run's process died after the
// finishing statement, before River wrote the completion, and the next run
// did not see the recorded success); unrecorded, a 2xx whose attempt was
// never recorded (the process died between the POST and the finishing
// statement). Only the second is the window at-least-once leaves open.
func explainDuplicates(t *testing.T, pool *pgxpool.Pool, tenants []*tenant) (again, unrecorded int) {
	t.Helper()
	recorded := map[string]int{}
	err := retry(func() error {
		clear(recorded)
		rows, err := pool.Query(context.Background(), `SELECT endpoint_id::text || '/' || event_id::text, count(*)
FROM webhook_attempts WHERE outcome = 'completed' GROUP BY 1`)
		if err != nil {
			return err
		}
		var (
			pair string
			n    int
		)
		_, err = pgx.ForEachRow(rows, []any{&pair, &n}, func() error {
			recorded[pair] = n
			return nil
		})
		return err
	})
	require.NoError(t, err)
	var pairs int
	for _, tn := range tenants {
		for _, ep := range tn.Eps {
			ok, _ := verified2xx(ep)
			for id, n := range ok {
				if n < 2 {
					continue
				}
				pairs++
				c := min(recorded[ep.ServerID+"/"+id], n)
				again += max(c-1, 0)
				unrecorded += n - max(c, 1)
			}
		}
	}
	t.Logf("duplicates: %d pairs; %d posts again after a recorded success, %d posts never recorded", pairs, again, unrecorded)
	return again, unrecorded
}

// watchEndpoint logs, each time it changes, what River holds for an
// endpoint's deliveries: per job state and queue, how many, with the age
// of their runs and the delay to their schedule; its lease slots; and the
// lanes. It explains a stall after a fault. The returned stop ends it and
// waits; the test's cleanup stops it too.
func watchEndpoint(t *testing.T, pool *pgxpool.Pool, endpointID string) (stop func()) {
	t.Helper()
	const summary = `SELECT
  coalesce((SELECT string_agg(s, '; ' ORDER BY s) FROM (
     SELECT format('%s %s: %s (run %s..%s s ago, due in %s..%s s)', j.state,
       CASE WHEN j.queue = 'webhooks' THEN 'shared' ELSE 'lane ' || right(j.queue, 4) END,
       count(*),
       round(extract(epoch FROM now() - max(j.attempted_at))), round(extract(epoch FROM now() - min(j.attempted_at))),
       round(extract(epoch FROM min(j.scheduled_at) - now())), round(extract(epoch FROM max(j.scheduled_at) - now()))) AS s
     FROM river_job j
     WHERE j.kind = 'webhook.deliver' AND j.args ->> 'endpoint_id' = $1 AND j.state <> 'completed'
     GROUP BY j.state, j.queue) x), ''),
  coalesce((SELECT string_agg(format('slot %s busy %s s holder %s', slot,
       round(extract(epoch FROM busy_until - now())), left(holder::text, 8)), '; ')
     FROM webhook_endpoint_leases WHERE endpoint_id = $1::uuid AND busy_until > now()), ''),
  coalesce((SELECT string_agg(format('%s alive %s s', right(lane, 4), round(extract(epoch FROM alive_until - now()))), '; ')
     FROM webhook_lanes), '')`
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		last := ""
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			var jobs, leases, lanes string
			err := pool.QueryRow(ctx, summary, endpointID).Scan(&jobs, &leases, &lanes)
			s := fmt.Sprintf("jobs [%s]; leases [%s]; lanes [%s]", jobs, leases, lanes)
			if err != nil {
				s = "watch: " + err.Error()
			}
			if ctx.Err() != nil {
				return
			}
			if s != last {
				t.Logf("endpoint at +%s: %s", time.Since(start).Round(100*time.Millisecond), s)
				last = s
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}
