package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// The delivery job as the outbound webhooks part names it; the bench reads
// River's own rows for snoozes and leftovers.
const (
	DeliverKind    = "webhook.deliver"
	noteEventType  = "corpus.note.changed"
	noteWriters    = 8
	deliveryLimit  = 150 * time.Second
	inboundWorkers = 32
)

// ServerBench drives real server processes on one fresh bench database: it
// owns the database, the sink (loopback receivers that verify every
// signature) and the child processes.
type ServerBench struct {
	o       Options
	r       *Report
	DBURL   string
	Pool    *pgxpool.Pool
	Opts    ServerOptions
	Sink    *Sink
	Servers []*Server
	rr      atomic.Uint64

	// Ceilings measured before any server runs (River clients of their own
	// would otherwise compete with the server's for the same queues).
	riverNoop          float64
	pickup             *Latencies
	echoRiver, bareEch LoadResult

	w2Groups []Group
	w2Rate   float64
	// replicas1Rate is W2 on one process just before the replica steps:
	// what they are compared with (see runReplicas).
	replicas1Rate float64
	workCounting  bool
	problems      []string
	emails        atomic.Int64
}

// NewServerBench opens the bench database at dbURL (FreshDatabase) and
// starts the sink. Close releases everything, child processes included.
func NewServerBench(ctx context.Context, o Options, r *Report, dbURL string) (*ServerBench, error) {
	b := &ServerBench{o: o, r: r, DBURL: dbURL}
	var err error
	cfg, err := pgxpool.ParseConfig(b.DBURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 40
	if b.Pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, err
	}
	if b.Sink, err = StartSink("127.0.0.1:0"); err != nil {
		b.Pool.Close()
		return nil, err
	}
	logPath := ""
	if o.LogDir != "" {
		fail := func(err error) (*ServerBench, error) {
			err = errors.Join(err, b.Sink.Close())
			b.Pool.Close()
			return nil, err
		}
		if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
			return fail(err)
		}
		logPath = filepath.Join(o.LogDir, "server.log")
		if err := os.Remove(logPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("remove the last run's server log: %w", err))
		}
	}
	b.Opts = ServerOptions{
		Binary:      o.Binary,
		DatabaseURL: b.DBURL,
		MasterKey:   NewMasterKey(),
		// Receivers are on loopback, which the outbound client refuses
		// unless allowed.
		// STANDMEET_WEBHOOK_MAX_ENDPOINTS lifts the per-owner endpoint
		// limit where the server reads it, so the 1,000-endpoint run can
		// be one owner's.
		Env:     map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8", "STANDMEET_WEBHOOK_MAX_ENDPOINTS": "2000"},
		LogPath: logPath,
	}
	for k, v := range publishEnv {
		b.Opts.Env[k] = v
	}
	return b, nil
}

// Close stops every server, the sink and the pool; what fails to stop is
// noted in the report.
func (b *ServerBench) Close() {
	b.StopServers()
	if err := b.Sink.Close(); err != nil {
		b.r.Note("sink: %v", err)
	}
	b.Pool.Close()
}

// StopServers stops every running server gracefully; a server that does
// not stop cleanly is noted in the report.
func (b *ServerBench) StopServers() {
	for _, s := range b.Servers {
		if err := s.Stop(30 * time.Second); err != nil {
			b.r.Note("server stop: %v", err)
		}
	}
	b.Servers = nil
}

// Scale sets how many server processes run (starting or stopping some).
func (b *ServerBench) Scale(ctx context.Context, n int) error {
	for len(b.Servers) > n {
		last := b.Servers[len(b.Servers)-1]
		b.Servers = b.Servers[:len(b.Servers)-1]
		if err := last.Stop(30 * time.Second); err != nil {
			b.r.Note("server stop: %v", err)
		}
	}
	for len(b.Servers) < n {
		s, err := StartServer(ctx, b.Opts)
		if err != nil {
			return err
		}
		b.Servers = append(b.Servers, s)
	}
	return nil
}

// base picks the next replica, round robin.
func (b *ServerBench) base() string {
	i := b.rr.Add(1)
	return b.Servers[int(i)%len(b.Servers)].URL
}

// NewOwner creates an owner with an API key and returns an admin client
// that spreads its calls over the running replicas.
func (b *ServerBench) NewOwner(ctx context.Context, name string) (*Admin, error) {
	email := fmt.Sprintf("%s-%d@bench.example.com", name, b.emails.Add(1))
	key, err := NewOwner(ctx, b.Opts, email)
	if err != nil {
		return nil, err
	}
	return &Admin{BaseFunc: b.base, Key: key, HTTP: NewClient(64)}, nil
}

// AddEndpoints registers n sink endpoints named prefix-i with the owner,
// each for the given globs, and arms their verifiers with the secrets.
func (b *ServerBench) AddEndpoints(ctx context.Context, a *Admin, prefix string, n int, globs func(i int) []string, respond Respond) ([]*SinkEndpoint, error) {
	eps := make([]*SinkEndpoint, n)
	for i := range eps {
		ep := b.Sink.Endpoint(fmt.Sprintf("%s-%d", prefix, i), respond)
		created, err := a.CreateWebhook(ctx, ep.URL, globs(i))
		if err != nil {
			return nil, err
		}
		if err := ep.SetSecret(created.Secret); err != nil {
			return nil, err
		}
		ep.ServerID = created.ID
		eps[i] = ep
	}
	return eps, nil
}

// Group is one owner and the endpoints registered under it.
type Group struct {
	Admin *Admin
	// Endpoints all of the owner's endpoints; Matching those whose globs
	// match corpus.note.changed.
	Endpoints, Matching []*SinkEndpoint
}

// EndpointGroups registers n endpoints named prefix-i (globs(i) each;
// matches(i) says whether they match corpus.note.changed). They go to one
// owner until the server's per-owner endpoint limit (ENDPOINT_LIMIT) stops
// it, then to further owners. Raise the limit where the server allows it
// (STANDMEET_WEBHOOK_MAX_ENDPOINTS) to keep them under one owner.
func (b *ServerBench) EndpointGroups(ctx context.Context, prefix string, n int, globs func(i int) []string, matches func(i int) bool) ([]Group, error) {
	var groups []Group
	var cur *Group
	for i := 0; i < n; i++ {
		if cur == nil {
			a, err := b.NewOwner(ctx, prefix)
			if err != nil {
				return nil, err
			}
			groups = append(groups, Group{Admin: a})
			cur = &groups[len(groups)-1]
		}
		ep := b.Sink.Endpoint(fmt.Sprintf("%s-%d", prefix, i), nil)
		created, err := cur.Admin.CreateWebhook(ctx, ep.URL, globs(i))
		var se *StatusError
		if errors.As(err, &se) && se.Status == http.StatusConflict && strings.Contains(se.Body, "ENDPOINT_LIMIT") && len(cur.Endpoints) > 0 {
			cur = nil
			i--
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := ep.SetSecret(created.Secret); err != nil {
			return nil, err
		}
		ep.ServerID = created.ID
		cur.Endpoints = append(cur.Endpoints, ep)
		if matches(i) {
			cur.Matching = append(cur.Matching, ep)
		}
	}
	return groups, nil
}

func matchingOf(groups []Group) []*SinkEndpoint {
	var out []*SinkEndpoint
	for _, g := range groups {
		out = append(out, g.Matching...)
	}
	return out
}

func adminsOf(groups []Group) []*Admin {
	out := make([]*Admin, len(groups))
	for i, g := range groups {
		out[i] = g.Admin
	}
	return out
}

// Commits maps a note's URI (the event's subject) to when its POST's 201
// arrived: the commit as the client sees it.
type Commits struct {
	mu sync.Mutex
	at map[string]time.Time
}

func newCommits() *Commits { return &Commits{at: map[string]time.Time{}} }

func (c *Commits) add(uri string, at time.Time) {
	c.mu.Lock()
	c.at[uri] = at
	c.mu.Unlock()
}

// Get returns the commit time of a subject.
func (c *Commits) Get(uri string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[uri]
	return t, ok
}

// Len is how many notes were written.
func (c *Commits) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.at)
}

// Times returns the commit times, sorted.
func (c *Commits) Times() []time.Time {
	c.mu.Lock()
	out := make([]time.Time, 0, len(c.at))
	for _, t := range c.at {
		out = append(out, t)
	}
	c.mu.Unlock()
	sortTimes(out)
	return out
}

// First returns the earliest commit.
func (c *Commits) First() time.Time {
	ts := c.Times()
	if len(ts) == 0 {
		return time.Time{}
	}
	return ts[0]
}

// Rate is how many commits per second were written, first to last.
func (c *Commits) Rate() float64 {
	ts := c.Times()
	if len(ts) < 2 {
		return 0
	}
	return float64(len(ts)-1) / ts[len(ts)-1].Sub(ts[0]).Seconds()
}

// WriteNotes writes n published notes (slugs prefix-i) through the admin
// API with concurrency writers, owner admins[i % len(admins)], and returns
// their commit times. It stops at the first error.
func WriteNotes(ctx context.Context, admins []*Admin, prefix string, n, concurrency int, into *Commits) error {
	var next atomic.Int64
	next.Store(-1)
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := writeNote(ctx, admins[i%len(admins)], prefix, i, into); err != nil {
					once.Do(func() { firstErr = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func writeNote(ctx context.Context, a *Admin, prefix string, i int, into *Commits) error {
	slug := fmt.Sprintf("%s-%d", prefix, i)
	n, at, err := a.CreateNote(ctx, slug, slug)
	if err != nil {
		return err
	}
	into.add(n.URI, at)
	return nil
}

// WaitOK waits until every endpoint has delivered want[i] distinct events
// (webhook-ids) of eventType in all, or limit passes; an
// event that arrives twice counts once. After the deadline it returns an
// error naming the shortfall; an endpoint holding more distinct events
// than expected is an error too (delivered must equal expected).
func WaitOK(ctx context.Context, eps []*SinkEndpoint, eventType string, want []int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		short, missing, extra := 0, int64(0), int64(0)
		for i, ep := range eps {
			d := want[i] - ep.OKType(eventType)
			if d > 0 {
				short++
				missing += d
			} else {
				extra -= d
			}
		}
		if short == 0 {
			if extra > 0 {
				return fmt.Errorf("%d deliveries beyond the %d expected", extra, sum(want))
			}
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d deliveries to %d endpoints still missing after %s", missing, short, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// CheckDelivered compares what a step delivered with what it expected: an
// error names the shortfall (or the excess) of distinct deliveries and the
// duplicates, which never count as deliveries.
func CheckDelivered(out Outcome, expected int) error {
	var errs []error
	if out.Delivered != expected {
		errs = append(errs, fmt.Errorf("%d of %d expected deliveries arrived", out.Delivered, expected))
	}
	if out.Duplicates > 0 {
		errs = append(errs, fmt.Errorf("%d duplicate deliveries", out.Duplicates))
	}
	return errors.Join(errs...)
}

// Outcome summarises what some endpoints received for the notes in commits.
type Outcome struct {
	// Latency: commit-to-receipt of each (endpoint, event)'s first
	// verified 2xx.
	Latency *Latencies
	// Delivered counts (endpoint, event) pairs; Duplicates the verified 2xx
	// arrivals beyond the first per pair (by webhook-id).
	Delivered, Duplicates int
	// Last is the latest first-delivery arrival.
	Last time.Time
	// MaxInFlight is the most concurrent requests any endpoint saw.
	MaxInFlight int64
	// Invalid counts requests whose signature did not verify.
	Invalid int
}

// Rate is deliveries per second from first (the first commit) to the last
// first-delivery; 0 when nothing arrived.
func (o Outcome) Rate(first time.Time) float64 {
	if o.Delivered == 0 || !o.Last.After(first) {
		return 0
	}
	return float64(o.Delivered) / o.Last.Sub(first).Seconds()
}

// snoozeNote returns "x snoozes per delivery" for the endpoints.
func (b *ServerBench) snoozesPerDelivery(ctx context.Context, eps []*SinkEndpoint) float64 {
	jobs, snoozes, err := b.Snoozes(ctx, serverIDs(eps))
	if err != nil {
		b.r.Note("snoozes: %v", err)
		return 0
	}
	return Ratio(float64(snoozes), float64(jobs))
}

// Tally computes the outcome of the notes in commits at eps.
func Tally(eps []*SinkEndpoint, commits *Commits) Outcome {
	out := Outcome{Latency: &Latencies{}}
	for _, ep := range eps {
		out.MaxInFlight = max(out.MaxInFlight, ep.MaxInFlight())
		seen := map[string]bool{}
		for _, a := range ep.Arrivals() {
			if !a.Valid {
				out.Invalid++
				continue
			}
			at, ok := commits.Get(a.Subject)
			if !ok || a.Status/100 != 2 {
				continue
			}
			if seen[a.ID] {
				out.Duplicates++
				continue
			}
			seen[a.ID] = true
			out.Delivered++
			out.Latency.Add(a.At.Sub(at))
			if a.At.After(out.Last) {
				out.Last = a.At
			}
		}
	}
	return out
}

// Snoozes returns how many delivery jobs River holds for the endpoints and
// the snoozes they took (metadata.snoozes, which River keeps per job).
func (b *ServerBench) Snoozes(ctx context.Context, endpointIDs []string) (jobs, snoozes int64, err error) {
	err = b.Pool.QueryRow(ctx, `SELECT count(*), coalesce(sum((metadata->>'snoozes')::bigint), 0)
		FROM river_job WHERE kind = $1 AND args->>'endpoint_id' = ANY($2)`, DeliverKind, endpointIDs).Scan(&jobs, &snoozes)
	return jobs, snoozes, err
}

// Due counts the River jobs running or due within five seconds. Retries
// of the sick endpoints an earlier step left are minutes out and do not
// count: the server is at rest between them.
func (b *ServerBench) Due(ctx context.Context) (int64, error) {
	var n int64
	err := b.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job
		WHERE state IN ('available', 'running') OR (state IN ('scheduled', 'retryable') AND scheduled_at < now() + interval '5 seconds')`).Scan(&n)
	return n, err
}

func serverIDs(eps []*SinkEndpoint) []string {
	ids := make([]string, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ServerID
	}
	return ids
}

func wantMore(eps []*SinkEndpoint, eventType string, each int64) []int64 {
	want := make([]int64, len(eps))
	for i, ep := range eps {
		want[i] = ep.OKType(eventType) + each
	}
	return want
}

// runCeilings measures, on the bench database and before any server
// starts, River's raw no-op throughput, its insert-to-work-start latency at
// the W3 pace, and the two W4 handlers.
func (b *ServerBench) runCeilings(ctx context.Context) error {
	var version, fsync, syncCommit string
	if err := b.Pool.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')`).
		Scan(&version, &fsync, &syncCommit); err == nil {
		b.r.Note("PostgreSQL %s (fsync %s, synchronous_commit %s) on the same machine", version, fsync, syncCommit)
	}
	cfg := DefaultRiverSettings()
	var err error
	if b.riverNoop, err = RiverNoop(ctx, b.Pool, cfg, b.o.scale(20000)); err != nil {
		return fmt.Errorf("river no-op: %w", err)
	}
	b.r.Note("ceiling: River no-op jobs (insert + work), %d workers, fetch cooldown %s, poll %s: %.0f jobs/s",
		cfg.MaxWorkers, cfg.FetchCooldown, cfg.FetchPollInterval, b.riverNoop)
	// The pace of W3; a third of its duration gives thousands of samples,
	// plenty for a p99, and keeps make bench within its time.
	if b.pickup, err = RiverPickup(ctx, b.Pool, cfg, 200, b.w3Duration()/3); err != nil {
		return fmt.Errorf("river pickup: %w", err)
	}
	b.r.Note("ceiling: River insert-to-work-start at 200 jobs/s: p50 %.1f ms, p99 %.1f ms", Ms(b.pickup.Percentile(50)), Ms(b.pickup.Percentile(99)))

	handler, stop, err := EchoRiverHandler(b.Pool, zap.NewNop())
	if err != nil {
		return err
	}
	defer stop()
	n := b.o.scale(20000)
	url, closeEcho, err := ServeEcho(handler)
	if err != nil {
		return err
	}
	b.echoRiver = Load(ctx, NewClient(inboundWorkers), n, inboundWorkers, postBuilder(url))
	if err := closeEcho(); err != nil {
		return fmt.Errorf("echo ceiling server: %w", err)
	}
	url, closeBare, err := ServeEcho(func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	if err != nil {
		return err
	}
	b.bareEch = Load(ctx, NewClient(inboundWorkers), n, inboundWorkers, postBuilder(url))
	if err := closeBare(); err != nil {
		return fmt.Errorf("bare echo ceiling server: %w", err)
	}
	b.r.Note("ceiling: Echo handler committing one River job per request: %.0f/s (p99 %.1f ms); bare Echo 204: %.0f/s",
		b.echoRiver.PerSecond(), Ms(b.echoRiver.Latency.Percentile(99)), b.bareEch.PerSecond())
	// The ceilings' rows must not look like the server's work.
	// Through River's client: only River writes its tables.
	jobs, err := river.NewClient(riverpgxv5.New(b.Pool), &river.Config{})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	for {
		res, err := jobs.JobDeleteMany(ctx, river.NewJobDeleteManyParams().Kinds("bench.noop").First(10000))
		if err != nil {
			return fmt.Errorf("delete the ceilings' jobs: %w", err)
		}
		if len(res.Jobs) < 10000 {
			return nil
		}
	}
}

// echoRiverCeiling measures W4's ceiling: an Echo handler committing one
// River job per request, loaded like W4 (the same number of requests, the
// same concurrency and client). Its jobs are deleted afterwards, so they do
// not look like the server's work.
func (b *ServerBench) echoRiverCeiling(ctx context.Context) (LoadResult, error) {
	handler, stop, err := EchoRiverHandler(b.Pool, zap.NewNop())
	if err != nil {
		return LoadResult{}, err
	}
	defer stop()
	url, closeEcho, err := ServeEcho(handler)
	if err != nil {
		return LoadResult{}, err
	}
	res := Load(ctx, NewClient(inboundWorkers), b.o.scale(20000), inboundWorkers, postBuilder(url))
	if err := closeEcho(); err != nil {
		return res, fmt.Errorf("echo ceiling server: %w", err)
	}
	// Through River's client: only River writes its tables.
	jobs, err := river.NewClient(riverpgxv5.New(b.Pool), &river.Config{})
	if err != nil {
		return res, fmt.Errorf("river client: %w", err)
	}
	for {
		del, err := jobs.JobDeleteMany(ctx, river.NewJobDeleteManyParams().Kinds("bench.noop").First(10000))
		if err != nil {
			return res, fmt.Errorf("delete the ceilings' jobs: %w", err)
		}
		if len(del.Jobs) < 10000 {
			return res, nil
		}
	}
}

func (b *ServerBench) w3Duration() time.Duration {
	if b.o.Quick {
		return 3 * time.Second
	}
	return 30 * time.Second
}

func postBuilder(url string) func(int) (*http.Request, error) {
	return func(i int) (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"n":%d}`, i)))
		if err == nil {
			req.Header.Set("content-type", "application/json")
		}
		return req, err
	}
}

// oneEndpoint adds an owner named by prefix with one endpoint subscribed
// to eventType: W1's and its drain's setup.
func (b *ServerBench) oneEndpoint(ctx context.Context, prefix, eventType string) (*Admin, []*SinkEndpoint, error) {
	a, err := b.NewOwner(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	eps, err := b.AddEndpoints(ctx, a, prefix, 1, func(int) []string { return []string{eventType} }, nil)
	if err != nil {
		return nil, nil, err
	}
	return a, eps, nil
}

// runW1 is the burst to one endpoint: 5,000 notes written as fast as 8
// writers can, each a corpus.note.changed delivered to the one endpoint.
func (b *ServerBench) runW1(ctx context.Context) error {
	a, eps, err := b.oneEndpoint(ctx, "w1", noteEventType)
	if err != nil {
		return err
	}
	n := b.o.scale(5000)
	commits := newCommits()
	want := wantMore(eps, noteEventType, int64(n))
	if err := WriteNotes(ctx, []*Admin{a}, "w1", n, noteWriters, commits); err != nil {
		return err
	}
	b.wait(ctx, "W1", eps, noteEventType, want)
	out := Tally(eps, commits)
	b.checkDelivered("W1", out, n)
	rate := out.Rate(commits.First())

	// The ceiling: the same bodies, signed and POSTed one at a time by a
	// loop to a sink endpoint that verifies them the same way.
	ceil := b.Sink.Endpoint("w1-ceiling", nil)
	secret, _ := standardwebhooks.NewSecret()
	if err := ceil.SetSecret(secret); err != nil {
		return err
	}
	// One message per event delivered: a retry or a duplicate is not a
	// message the loop would send.
	var msgs []Message
	seen := map[string]bool{}
	for _, ar := range eps[0].Arrivals() {
		if ar.Valid && ar.Status/100 == 2 && !seen[ar.ID] {
			seen[ar.ID] = true
			msgs = append(msgs, Message{ID: ar.ID, Body: ar.Body})
		}
	}
	serialRate, serialLat, err := SerialSign(ctx, ceil.URL, secret, msgs)
	if err != nil {
		return err
	}
	queue := SerialQueue(commits.Times(), serialLat.Values())
	jobs, snoozes, err := b.Snoozes(ctx, serverIDs(eps))
	if err != nil {
		return err
	}
	b.r.Add(Figure{Key: "w1_deliveries_per_s", Label: "W1 burst, 1 endpoint: deliveries", Unit: "/s",
		Value: rate, Ceiling: "serial sign+POST loop, same bodies", CeilingValue: serialRate})
	b.r.Add(Figure{Key: "w1_p50_ms", Label: "W1 commit-to-receipt p50", Unit: "ms", LowerIsBetter: true,
		Value: Ms(out.Latency.Percentile(50)), Ceiling: "serial loop fed at the same commit times", CeilingValue: Ms(queue.Percentile(50))})
	b.r.Add(Figure{Key: "w1_p99_ms", Label: "W1 commit-to-receipt p99", Unit: "ms", LowerIsBetter: true,
		Value: Ms(out.Latency.Percentile(99)), Ceiling: "serial loop fed at the same commit times", CeilingValue: Ms(queue.Percentile(99))})
	b.r.Extra["w1_snoozes_per_delivery"] = Ratio(float64(snoozes), float64(jobs))
	b.r.Extra["w1_notes_written_per_s"] = commits.Rate()
	b.r.Extra["w1_duplicates"] = float64(out.Duplicates)
	b.r.Extra["w1_max_in_flight"] = float64(out.MaxInFlight)
	b.r.Note("commit-to-receipt: from the arrival of the note POST's 201 (sent after its transaction committed) to the delivery's arrival at the receiver, matched by subject (the note's URI)")
	b.r.Note("W1: %d deliveries, %d snoozes over %d delivery jobs (%.3f per delivery, from River's metadata.snoozes), %d duplicates, max %d in flight",
		out.Delivered, snoozes, jobs, Ratio(float64(snoozes), float64(jobs)), out.Duplicates, out.MaxInFlight)
	b.r.Series = append(b.r.Series, out.Latency.Series("W1 burst 1 endpoint"), queue.Series("W1 ceiling: serial loop"))
	b.checkClean("W1", out)
	b.r.Add(Figure{Key: "w1_vs_writes", Label: "W1 deliveries (vs the notes written)", Unit: "/s",
		Value: rate, Ceiling: "notes written by the 8 writers, same run", CeilingValue: commits.Rate()})
	return b.runW1Drain(ctx, serialRate)
}

// runW1Drain measures the delivery engine alone on one endpoint: 5,000
// events are published (the publish API, batches of 100) while the webhooks
// queue is paused (River's queue pause, as an operator would from the admin
// UI), so their deliveries wait as a backlog; the queue is resumed and the
// drain timed from the resume to the last receipt. W1 itself cannot run
// faster than its notes are written, and writing the backlog as notes
// would cost the run half a minute more.
func (b *ServerBench) runW1Drain(ctx context.Context, serialRate float64) error {
	a, eps, err := b.oneEndpoint(ctx, "w1d", w5EventType)
	if err != nil {
		return err
	}
	queue, err := b.pauseQueue(ctx, "webhooks")
	if err != nil {
		return err
	}
	defer queue.Close(ctx)
	n := b.o.scale(5000)
	commits := newCommits()
	want := wantMore(eps, w5EventType, int64(n))
	if err := PublishEvents(ctx, a, "w1d-"+uuid.NewString()[:8], n, commits); err != nil {
		return fmt.Errorf("W1 drain: %w", err)
	}
	// Wait for every fan-out to have queued its delivery.
	if err := b.waitCount(ctx, func(queued int) bool { return queued >= n },
		func(queued int) error { return fmt.Errorf("W1 drain: only %d of %d deliveries queued", queued, n) },
		`SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND args->>'endpoint_id' = $1`, eps[0].ServerID); err != nil {
		return err
	}
	// Every other job (the relay's, the fan-outs') ends first, so the
	// drain times deliveries alone.
	if err := b.waitCount(ctx, func(busy int) bool { return busy == 0 },
		func(busy int) error {
			return fmt.Errorf("W1 drain: %d jobs of other queues still to run before the drain", busy)
		},
		`SELECT count(*) FROM river_job WHERE queue <> 'webhooks' AND queue NOT LIKE 'webhooks\_%' AND state IN ('available', 'running')`); err != nil {
		return err
	}
	var start time.Time
	var out Outcome
	if err := b.MeasureWork(ctx, "w1_drain", "delivery", func() (int64, error) {
		start = time.Now()
		if err := queue.Resume(ctx); err != nil {
			return 0, err
		}
		b.wait(ctx, "W1 drain", eps, w5EventType, want)
		out = Tally(eps, commits)
		b.checkDelivered("W1 drain", out, n)
		return int64(out.Delivered), nil
	}); err != nil {
		return err
	}
	jobs, snoozes, err := b.Snoozes(ctx, serverIDs(eps))
	if err != nil {
		return err
	}
	b.r.Add(Figure{Key: "w1_drain_per_s", Label: "W1 backlog of 5,000 drained to 1 endpoint", Unit: "/s",
		Value: out.Rate(start), Ceiling: "serial sign+POST loop, same bodies", CeilingValue: serialRate})
	b.r.Extra["w1_drain_snoozes_per_delivery"] = Ratio(float64(snoozes), float64(jobs))
	b.r.Extra["w1_drain_duplicates"] = float64(out.Duplicates)
	b.r.Extra["w1_drain_max_in_flight"] = float64(out.MaxInFlight)
	b.r.Note("W1 drain: %d deliveries queued while the webhooks queue was paused, drained in %.1f s after the resume; %d snoozes over %d jobs, %d duplicates, max %d in flight",
		out.Delivered, out.Last.Sub(start).Seconds(), snoozes, jobs, out.Duplicates, out.MaxInFlight)
	b.checkClean("W1 drain", out)
	return nil
}

// wait waits for the deliveries of a workload. A shortfall does not stop
// the bench: the figures are computed from what arrived, the shortfall is
// noted, and Run fails at the end, after every figure is written.
func (b *ServerBench) wait(ctx context.Context, name string, eps []*SinkEndpoint, eventType string, want []int64) {
	limit := deliveryLimit
	if b.o.Budget > 0 && !b.o.Quick {
		// Never wait past the run's budget (less a little for the rest).
		limit = min(limit, max(time.Until(b.r.Started.Add(b.o.Budget))-20*time.Second, 10*time.Second))
	}
	if err := WaitOK(ctx, eps, eventType, want, limit); err != nil {
		b.Problem("%s: INCOMPLETE: %v", name, err)
	}
}

// Problem notes something that makes the run a failure without stopping it.
func (b *ServerBench) Problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.problems = append(b.problems, msg)
	b.r.Note("%s", msg)
}

// Problems returns what went wrong, if anything.
func (b *ServerBench) Problems() []string { return b.problems }

// checkDelivered makes CheckDelivered's error a problem of the run: the
// step's figures stand, but the run fails.
func (b *ServerBench) checkDelivered(name string, out Outcome, expected int) {
	if err := CheckDelivered(out, expected); err != nil {
		b.Problem("%s: %v", name, err)
	}
}

// checkClean turns a bad signature or a broken lease into an error: the
// bench's figures mean nothing if the deliveries were wrong.
func (b *ServerBench) checkClean(name string, out Outcome) {
	if out.Invalid > 0 {
		b.Problem("%s: %d requests failed signature verification", name, out.Invalid)
	}
	if out.MaxInFlight > 1 {
		b.Problem("%s: an endpoint saw %d requests in flight at once", name, out.MaxInFlight)
	}
}

// runFanout has every group's owner write events notes and waits until
// each matching endpoint has them all; it returns the outcome and the
// deliveries per second, first commit to last receipt.
func (b *ServerBench) runFanout(ctx context.Context, groups []Group, prefix string, events int) (Outcome, float64, error) {
	commits := newCommits()
	eps := matchingOf(groups)
	want := wantMore(eps, noteEventType, int64(events))
	if err := WriteNotes(ctx, adminsOf(groups), prefix, events*len(groups), noteWriters, commits); err != nil {
		return Outcome{}, 0, err
	}
	b.wait(ctx, prefix, eps, noteEventType, want)
	out := Tally(eps, commits)
	b.checkDelivered(prefix, out, events*len(eps))
	b.spanNote(prefix, commits, out)
	return out, out.Rate(commits.First()), nil
}

// spanNote says how long the notes took to commit and the deliveries to
// arrive: the deliveries can be waiting for the writes only when the two
// spans are about as long.
func (b *ServerBench) spanNote(name string, commits *Commits, out Outcome) {
	ts := commits.Times()
	if len(ts) < 2 || out.Delivered == 0 {
		return
	}
	b.r.Note("%s: %d notes committed over %.1f s (%.0f/s); the last delivery %.1f s after the first commit",
		name, len(ts), ts[len(ts)-1].Sub(ts[0]).Seconds(), commits.Rate(), out.Last.Sub(ts[0]).Seconds())
}

// groupsNote says how endpoints were spread over owners when the server's
// per-owner limit forced it.
func (b *ServerBench) groupsNote(name string, groups []Group, events int) {
	if len(groups) > 1 {
		b.r.Note("%s: the server's per-owner endpoint limit spread the endpoints over %d owners; each owner wrote %d events (%d in all)",
			name, len(groups), events, events*len(groups))
	}
	b.r.Extra[strings.ToLower(strings.ReplaceAll(name, " ", "_"))+"_owners"] = float64(len(groups))
}

// runW2 is the fan-out: 100 endpoints × 200 events.
func (b *ServerBench) runW2(ctx context.Context) error {
	groups, err := b.EndpointGroups(ctx, "w2", 100, func(int) []string { return []string{noteEventType} }, func(int) bool { return true })
	if err != nil {
		return err
	}
	b.w2Groups = groups
	events := b.o.scale(200)
	b.groupsNote("W2", groups, events)
	var out Outcome
	var rate float64
	if err := b.MeasureWork(ctx, "w2", "delivery", func() (int64, error) {
		var err error
		out, rate, err = b.runFanout(ctx, groups, "w2", events)
		return int64(out.Delivered), err
	}); err != nil {
		return err
	}
	b.w2Rate = rate
	b.r.Add(Figure{Key: "w2_deliveries_per_s", Label: fmt.Sprintf("W2 fan-out %d endpoints x %d events", len(matchingOf(groups)), events), Unit: "/s",
		Value: rate, Ceiling: "River no-op jobs (insert + work)", CeilingValue: b.riverNoop})
	b.r.Extra["w2_p50_ms"] = Ms(out.Latency.Percentile(50))
	b.r.Extra["w2_p99_ms"] = Ms(out.Latency.Percentile(99))
	b.r.Extra["w2_duplicates"] = float64(out.Duplicates)
	b.r.Extra["w2_max_in_flight"] = float64(out.MaxInFlight)
	spd := b.snoozesPerDelivery(ctx, matchingOf(groups))
	b.r.Extra["w2_snoozes_per_delivery"] = spd
	b.r.Note("W2: %d deliveries, commit-to-receipt p50 %.0f ms, p99 %.0f ms, %d duplicates, max %d in flight per endpoint, %.3f snoozes per delivery",
		out.Delivered, Ms(out.Latency.Percentile(50)), Ms(out.Latency.Percentile(99)), out.Duplicates, out.MaxInFlight, spd)
	b.r.Series = append(b.r.Series, out.Latency.Series("W2 fan-out 100 endpoints"))
	b.checkClean("W2", out)
	return nil
}

// runW3 paces 200 events/s for 30 s over 10 endpoints: ten owners with one
// endpoint each, notes written round robin, so each event is one delivery
// and the pace of deliveries equals the pace of River's ceiling run.
func (b *ServerBench) runW3(ctx context.Context) error {
	const owners = 10
	admins := make([]*Admin, owners)
	var eps []*SinkEndpoint
	for i := range admins {
		a, err := b.NewOwner(ctx, "w3")
		if err != nil {
			return err
		}
		ep, err := b.AddEndpoints(ctx, a, fmt.Sprintf("w3-%d", i), 1, func(int) []string { return []string{noteEventType} }, nil)
		if err != nil {
			return err
		}
		admins[i], eps = a, append(eps, ep...)
	}
	commits := newCommits()
	var failed atomic.Int64
	var firstErr atomic.Value
	sent := Pace(ctx, 200, b.w3Duration(), func(i int) {
		if err := writeNote(ctx, admins[i%owners], "w3", i, commits); err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, err)
		}
	})
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("W3: %d of %d note writes failed: %v", f, sent, firstErr.Load())
	}
	want := make([]int64, owners)
	for i := 0; i < sent; i++ {
		want[i%owners]++
	}
	b.wait(ctx, "W3", eps, noteEventType, want)
	out := Tally(eps, commits)
	b.checkDelivered("W3", out, sent)
	b.spanNote("W3", commits, out)
	b.r.Add(Figure{Key: "w3_p50_ms", Label: "W3 paced 200/s, 10 endpoints: p50", Unit: "ms", LowerIsBetter: true,
		Value: Ms(out.Latency.Percentile(50)), Ceiling: "River insert-to-work-start at 200/s", CeilingValue: Ms(b.pickup.Percentile(50))})
	b.r.Add(Figure{Key: "w3_p99_ms", Label: "W3 paced 200/s, 10 endpoints: p99", Unit: "ms", LowerIsBetter: true,
		Value: Ms(out.Latency.Percentile(99)), Ceiling: "River insert-to-work-start at 200/s", CeilingValue: Ms(b.pickup.Percentile(99))})
	b.r.Extra["w3_events"] = float64(sent)
	b.r.Extra["w3_duplicates"] = float64(out.Duplicates)
	b.r.Extra["w3_snoozes_per_delivery"] = b.snoozesPerDelivery(ctx, eps)
	b.r.Note("W3: %d events, commit-to-receipt p50 %.0f ms, p99 %.0f ms, %.3f snoozes per delivery",
		sent, Ms(out.Latency.Percentile(50)), Ms(out.Latency.Percentile(99)), b.r.Extra["w3_snoozes_per_delivery"])
	b.r.Series = append(b.r.Series, out.Latency.Series("W3 paced 200/s"), b.pickup.Series("W3 ceiling: River pickup"))
	b.checkClean("W3", out)
	return nil
}

// runW4 sends 20,000 Standard-Webhooks-signed requests to one inbound
// source at concurrency 32, processing running meanwhile as in production,
// and counts the database work per accepted message until every one is
// processed (w4_*_per_message). Then runW4Split measures the handler and
// the processing apart.
func (b *ServerBench) runW4(ctx context.Context) error {
	a, err := b.NewOwner(ctx, "w4")
	if err != nil {
		return err
	}
	src, err := a.CreateInboundSource(ctx, "bench")
	if err != nil {
		return err
	}
	key, err := standardwebhooks.ParseSecret(src.Secret)
	if err != nil {
		return err
	}
	n := b.o.scale(20000)
	// The ceiling again, right before W4: the machine's share left by other
	// load changes within a run, and W4 is compared to the higher of the two.
	ceiling, err := b.echoRiverCeiling(ctx)
	if err != nil {
		return err
	}
	b.r.Note("ceiling again right before W4: Echo handler committing one River job per request: %.0f/s (p99 %.1f ms); W4 is compared to the higher of the two",
		ceiling.PerSecond(), Ms(ceiling.Latency.Percentile(99)))
	if ceiling.PerSecond() < b.echoRiver.PerSecond() {
		ceiling = b.echoRiver
	}
	var res LoadResult
	var accepted int
	if err := b.MeasureWork(ctx, "w4", "message", func() (int64, error) {
		res = b.sendW4(ctx, src.ID, key, "msg_w4_", n)
		accepted = res.Statuses[http.StatusAccepted]
		return int64(accepted), b.waitInboxDone(ctx, src.ID, accepted)
	}); err != nil {
		return err
	}
	rate := float64(accepted) / res.Elapsed.Seconds()
	b.r.Add(Figure{Key: "w4_accepted_per_s", Label: "W4 inbound, concurrency 32: accepted", Unit: "/s",
		Value: rate, Ceiling: "Echo handler committing 1 River job", CeilingValue: ceiling.PerSecond()})
	b.r.Add(Figure{Key: "w4_accepted_per_s_vs_bare", Label: "W4 inbound accepted (vs bare handler)", Unit: "/s",
		Value: rate, Ceiling: "bare Echo 204 handler", CeilingValue: b.bareEch.PerSecond()})
	b.r.Add(Figure{Key: "w4_p99_ms", Label: "W4 inbound p99", Unit: "ms", LowerIsBetter: true,
		Value: Ms(res.Latency.Percentile(99)), Ceiling: "Echo handler committing 1 River job", CeilingValue: Ms(ceiling.Latency.Percentile(99))})
	b.r.Extra["w4_accepted"] = float64(accepted)
	b.r.Extra["w4_p50_ms"] = Ms(res.Latency.Percentile(50))
	b.r.Series = append(b.r.Series, res.Latency.Series("W4 inbound"), ceiling.Latency.Series("W4 ceiling: Echo + River job"))
	if accepted != n {
		return fmt.Errorf("W4: %d of %d accepted (statuses %v, %d transport errors)", accepted, n, res.Statuses, res.Errors)
	}
	return b.runW4Split(ctx, src.ID, key)
}

// runW4Split sends a quarter of W4 with the inbound queue paused (River's
// queue pause) and counts the handler's work alone (w4_handler_*), then
// resumes the queue and counts the processing of the same messages
// (w4_processing_*).
func (b *ServerBench) runW4Split(ctx context.Context, sourceID string, key []byte) error {
	queue, err := b.pauseQueue(ctx, "inbound")
	if err != nil {
		return err
	}
	defer queue.Close(ctx)
	before, ok, err := b.WorkSnapshot(ctx)
	if err != nil {
		return err
	}
	res := b.sendW4(ctx, sourceID, key, "msg_w4s_", b.o.scale(5000))
	accepted := res.Statuses[http.StatusAccepted]
	sent, _, err := b.WorkSnapshot(ctx)
	if err != nil {
		return err
	}
	if err := queue.Resume(ctx); err != nil {
		return err
	}
	if err := b.waitInboxDone(ctx, sourceID, -1); err != nil {
		return err
	}
	if !ok {
		return nil
	}
	done, _, err := b.WorkSnapshot(ctx)
	if err != nil {
		return err
	}
	b.reportWork("w4_handler", "message", sent.Sub(before), int64(accepted))
	b.reportWork("w4_processing", "message", done.Sub(sent), int64(accepted))
	return nil
}

// sendW4 sends n distinct signed messages with ids prefix+i to the source.
func (b *ServerBench) sendW4(ctx context.Context, sourceID string, key []byte, prefix string, n int) LoadResult {
	url := b.Servers[0].URL + "/hooks/" + sourceID
	return Load(ctx, NewClient(inboundWorkers), n, inboundWorkers, func(i int) (*http.Request, error) {
		id := fmt.Sprintf("%s%d", prefix, i)
		body := []byte(fmt.Sprintf(`{"type":"bench.ping","n":%d}`, i))
		req, err := http.NewRequest(http.MethodPost, url, bytesReader(body))
		if err != nil {
			return nil, err
		}
		now := time.Now()
		req.Header.Set("content-type", "application/json")
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		req.Header.Set("webhook-signature", standardwebhooks.Sign(key, id, now, body))
		return req, nil
	})
}

// waitCount polls the count query returns, every 100 ms for up to two
// minutes, until done accepts it; then it returns late's error for the
// last count.
func (b *ServerBench) waitCount(ctx context.Context, done func(int) bool, late func(int) error, query string, args ...any) error {
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var n int
		if err := b.Pool.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			return err
		}
		if done(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return late(n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitInboxDone waits until the source's inbox holds at least want
// processed messages, or (want < 0) none waiting or processing.
func (b *ServerBench) waitInboxDone(ctx context.Context, sourceID string, want int) error {
	for deadline := time.Now().Add(3 * time.Minute); ; {
		var done, open int
		if err := b.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state IN ('received', 'processing'))
			FROM inbound_messages WHERE source_id = $1`, sourceID).Scan(&done, &open); err != nil {
			return err
		}
		if (want >= 0 && done >= want) || (want < 0 && open == 0) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("W4: %d processed, %d waiting after 3 minutes", done, open)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runMemory reads the first server's peak RSS and, once River has nothing
// due, its goroutines at rest.
func (b *ServerBench) runMemory(ctx context.Context) error {
	s := b.Servers[0]
	peak, err := s.PeakRSS()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := b.Due(ctx)
		if err != nil {
			return err
		}
		if n == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Idle HTTP and database connections close on their own timers; give
	// the process a moment to reach its resting state.
	time.Sleep(3 * time.Second)
	g, err := s.Metric(ctx, "go_goroutines")
	if err != nil {
		return err
	}
	b.r.Extra["server_peak_rss_mb"] = float64(peak) / (1 << 20)
	b.r.Extra["server_goroutines_at_rest"] = g
	b.r.Note("memory: peak RSS of the server process over W1-W4 %.0f MB (VmHWM); %v goroutines at rest (go_goroutines)", float64(peak)/(1<<20), g)
	return nil
}

// runManyEndpoints is W2 with 1,000 endpoints configured of which 100
// match: the cost of glob filtering in the fan-out.
func (b *ServerBench) runManyEndpoints(ctx context.Context) error {
	total, matching := 1000, 100
	if b.o.Quick {
		total, matching = 100, 10
	}
	match := []string{noteEventType, "corpus.*", "*.changed", "corpus.note.*", "*"}
	var other []string
	for _, t := range domain.WebhookEventTypes() {
		if !domain.MatchGlob(t.Name, noteEventType) {
			other = append(other, t.Name)
		}
	}
	if len(other) == 0 {
		return errors.New("no webhook event type other than corpus.note.changed to subscribe the non-matching endpoints to")
	}
	every := total / matching
	isMatch := func(i int) bool { return i%every == 0 }
	groups, err := b.EndpointGroups(ctx, "w2k", total, func(i int) []string {
		if isMatch(i) {
			return []string{match[(i/every)%len(match)]}
		}
		return []string{other[i%len(other)], other[(i+1)%len(other)]}
	}, isMatch)
	if err != nil {
		return err
	}
	events := b.o.scale(200)
	b.groupsNote("W2 1000 endpoints", groups, events)
	out, rate, err := b.runFanout(ctx, groups, "w2k", events)
	if err != nil {
		return err
	}
	stray := int64(0)
	for _, g := range groups {
		for _, ep := range g.Endpoints {
			if !slices.Contains(g.Matching, ep) {
				stray += int64(ep.RequestsType(noteEventType))
			}
		}
	}
	b.r.Add(Figure{Key: "w2_1000_endpoints_deliveries_per_s", Label: fmt.Sprintf("W2, %d endpoints of which %d match", total, matching), Unit: "/s",
		Value: rate, Ceiling: "River no-op jobs (insert + work)", CeilingValue: b.riverNoop})
	b.r.Extra["w2_1000_endpoints_vs_w2_ratio"] = Ratio(rate, b.w2Rate)
	b.r.Extra["w2_1000_endpoints_stray_requests"] = float64(stray)
	b.r.Note("W2 with %d endpoints (%d match): %.0f deliveries/s, %.2f of W2's rate; %d requests to non-matching endpoints",
		total, matching, rate, Ratio(rate, b.w2Rate), stray)
	if stray > 0 {
		b.Problem("W2 1,000 endpoints: %d deliveries reached endpoints whose globs do not match", stray)
	}
	b.checkClean("W2 1,000 endpoints", out)
	return nil
}

// runReplicas is W2 (the same 100 endpoints, 200 new events) on n server
// processes sharing the database; note writes are spread over them. With
// n = 1, on the process that ran every earlier step, it gives the rate the
// replica steps are compared with: River's table then holds every earlier
// step's jobs, as it does for them. Each step first delivers a quarter as
// many events unmeasured, so the measured part excludes what a process
// pays once after it starts (every pooled connection's plans, the lanes
// settling).
func (b *ServerBench) runReplicas(ctx context.Context, n int) error {
	if err := b.Scale(ctx, n); err != nil {
		return err
	}
	events := b.o.scale(200)
	warm, warmRate, err := b.runFanout(ctx, b.w2Groups, fmt.Sprintf("w2r%dw", n), max(1, events/4))
	if err != nil {
		return fmt.Errorf("warm up %d processes: %w", n, err)
	}
	b.checkClean(fmt.Sprintf("W2 on %d processes, warming up", n), warm)
	b.r.Extra[fmt.Sprintf("w2_replicas_%d_warmup_deliveries_per_s", n)] = warmRate
	var (
		out  Outcome
		rate float64
	)
	if err := b.MeasureWork(ctx, fmt.Sprintf("w2_replicas_%d", n), "delivery", func() (int64, error) {
		var err error
		out, rate, err = b.runFanout(ctx, b.w2Groups, fmt.Sprintf("w2r%d", n), events)
		return int64(out.Delivered), err
	}); err != nil {
		return err
	}
	b.r.Extra[fmt.Sprintf("w2_replicas_%d_snoozes_per_delivery", n)] = b.snoozesPerDelivery(ctx, matchingOf(b.w2Groups))
	label := fmt.Sprintf("W2 on %d server processes", n)
	if n == 1 {
		label = "W2 on 1 server process, before the replica steps"
	}
	b.r.Add(Figure{Key: fmt.Sprintf("w2_replicas_%d_deliveries_per_s", n), Label: label, Unit: "/s",
		Value: rate, Ceiling: "River no-op jobs (1 client)", CeilingValue: b.riverNoop})
	b.r.Extra[fmt.Sprintf("w2_replicas_%d_vs_w2_ratio", n)] = Ratio(rate, b.w2Rate)
	b.r.Extra[fmt.Sprintf("w2_replicas_%d_max_in_flight", n)] = float64(out.MaxInFlight)
	b.r.Extra[fmt.Sprintf("w2_replicas_%d_duplicates", n)] = float64(out.Duplicates)
	b.checkClean(label, out)
	if n == 1 {
		b.replicas1Rate = rate
		b.r.Note("W2 on 1 process before the replica steps: %.0f deliveries/s (%.2f x W2 early in the run; %.0f/s while warming up), p99 %.0f ms",
			rate, Ratio(rate, b.w2Rate), warmRate, Ms(out.Latency.Percentile(99)))
		return nil
	}
	one, against := b.replicas1Rate, "one process just before"
	if one == 0 {
		one, against = b.w2Rate, "W2 early in the run"
	}
	b.r.Extra[fmt.Sprintf("w2_replicas_%d_vs_1_ratio", n)] = Ratio(rate, one)
	b.r.Note("W2 on %d processes: %.0f deliveries/s (%.2f x %s, %.2f x W2 early in the run; %.0f/s while warming up), p99 %.0f ms, %d duplicates, max %d in flight per endpoint",
		n, rate, Ratio(rate, one), against, Ratio(rate, b.w2Rate), warmRate, Ms(out.Latency.Percentile(99)), out.Duplicates, out.MaxInFlight)
	return nil
}

// pausedQueue is a River queue the bench paused (River's queue pause, as
// an operator would from River UI) so that work waits as a backlog.
type pausedQueue struct {
	b       *ServerBench
	client  *river.Client[pgx.Tx]
	names   []string
	resumed bool
}

// pauseQueue pauses the named queue and its lanes (the queues named
// name_…, one per server process) for every server process.
func (b *ServerBench) pauseQueue(ctx context.Context, name string) (*pausedQueue, error) {
	client, err := river.NewClient(riverpgxv5.New(b.Pool), &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	queues, err := client.QueueList(ctx, river.NewQueueListParams().First(10000))
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	q := &pausedQueue{b: b, client: client, names: []string{name}}
	for _, rq := range queues.Queues {
		if strings.HasPrefix(rq.Name, name+"_") {
			q.names = append(q.names, rq.Name)
		}
	}
	for _, n := range q.names {
		if err := client.QueuePause(ctx, n, nil); err != nil {
			return nil, fmt.Errorf("pause %s: %w", n, err)
		}
	}
	return q, nil
}

// Resume starts the queues again.
func (q *pausedQueue) Resume(ctx context.Context) error {
	for _, n := range q.names {
		if err := q.client.QueueResume(ctx, n, nil); err != nil {
			return fmt.Errorf("resume %s: %w", n, err)
		}
	}
	q.resumed = true
	return nil
}

// Close resumes the queue if Resume never ran, so a failed step leaves no
// queue paused for the next; a failure to resume is a problem of the run.
func (q *pausedQueue) Close(ctx context.Context) {
	if q.resumed {
		return
	}
	if err := q.Resume(context.WithoutCancel(ctx)); err != nil {
		q.b.Problem("%v", err)
	}
}
