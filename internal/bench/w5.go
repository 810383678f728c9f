package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
)

// W5's receivers answer as real ones do: long-tailed latencies, some
// failures, throttling and hangs.
const (
	// w5Seed makes the receivers' latencies, max_in_flight and the
	// events' endpoints the same in every run.
	w5Seed = 32
	// The answers of a healthy receiver: 2 % 500, 1 % 429 with
	// Retry-After: 1, 0.5 % hanging until the endpoint's timeout.
	w5FailRate, w5ThrottleRate, w5HangRate = 0.02, 0.01, 0.005
	// w5Timeout is every W5 endpoint's timeout_seconds: it bounds a hang.
	w5Timeout = 2 * time.Second
	// Latencies are log-normal with median 40 ms (mu = ln 40 ms) and
	// sigma 1.15: p90 40·e^(1.2816·1.15) ≈ 175 ms and p99
	// 40·e^(2.3263·1.15) ≈ 580 ms, between the wanted p90 (150 ms) and
	// p99 (800 ms), which no single log-normal meets together. Draws are
	// capped below the timeout so a healthy receiver never times out by
	// its latency alone.
	w5MedianLatency = 40 * time.Millisecond
	w5Sigma         = 1.15
	w5MaxLatency    = 1500 * time.Millisecond
	// w5ZipfS is the Zipf exponent of the events over endpoints: the
	// endpoint of rank r gets a share proportional to 1/r^s.
	w5ZipfS = 1.0
	// w5Load is the share of what the receivers can take that is offered.
	w5Load = 0.7
	// w5MaxRate caps the offered rate where the machine, not the
	// receivers, would bound it. W5 asks how the engine treats healthy
	// endpoints beside sick ones, not how much the machine can push (W2
	// does), so the rate leaves a 2-core machine that runs the server,
	// PostgreSQL, the receivers and the publishers (some 7-10 ms of
	// processor time per delivery) room: a saturated machine's queue would
	// be all the receipt figures show.
	w5MaxRate = 150.0
	// w5EventType is a publishable type; each endpoint subscribes to it
	// with a filter on its own subject, so each event goes to one endpoint.
	w5EventType = "booking.created"
)

// w5Receiver is one W5 endpoint: its model, where it listens and the
// events it was sent.
type w5Receiver struct {
	model   ReceiverModel
	rank    int
	weight  float64
	subject string
	url     string
	// answers draws its answers; ep is the verifying sink endpoint, nil
	// for a down receiver.
	answers  *w5Answers
	ep       *SinkEndpoint
	serverID string
	owner    int
}

func (r *w5Receiver) healthy() bool { return !r.model.Down && !r.model.AlwaysFail }

// w5Answers is the sequence of one receiver's draws (seeded by its rank):
// the nth request after a restart draws the same in every phase, so the
// phases with and without the sick endpoints meet the same failures,
// throttles and hangs at each healthy endpoint, and their p99s compare the
// engine, not where the hangs happened to fall.
type w5Answers struct {
	mu   sync.Mutex
	seed uint64
	rng  *rand.Rand
}

func newW5Answers(seed uint64) *w5Answers {
	a := &w5Answers{seed: seed}
	a.restart()
	return a
}

// restart begins the sequence again.
func (a *w5Answers) restart() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rng = rand.New(rand.NewPCG(w5Seed, a.seed))
}

// next is the next draw of the sequence, in [0, 1).
func (a *w5Answers) next() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rng.Float64()
}

// w5Receivers draws n receivers (seeded): log-normal latencies, 10 % with
// max_in_flight 4, down and always failing ones at ranks spread over the
// skew, and the Zipf weight of each. Ranks go to healthy receivers by
// capacity, largest first: the busiest integrations have the most capable
// receivers, so the skewed load can stay under what each receiver takes.
func w5Receivers(n, down, alwaysFail int) []*w5Receiver {
	rng := rand.New(rand.NewPCG(w5Seed, w5Seed))
	rs := make([]*w5Receiver, n)
	mu := math.Log(float64(w5MedianLatency))
	for i := range rs {
		lat := time.Duration(math.Exp(mu + w5Sigma*rng.NormFloat64()))
		lat = min(max(lat, time.Millisecond), w5MaxLatency)
		mif := 1
		if rng.Float64() < 0.1 {
			mif = 4
		}
		rs[i] = &w5Receiver{model: ReceiverModel{Latency: lat, MaxInFlight: mif, Timeout: w5Timeout,
			FailRate: w5FailRate, ThrottleRate: w5ThrottleRate, HangRate: w5HangRate}}
	}
	for i := 0; i < down+alwaysFail; i++ {
		m := &rs[i].model
		m.FailRate, m.ThrottleRate, m.HangRate = 0, 0, 0
		if i < down {
			m.Down = true
		} else {
			m.AlwaysFail = true
		}
	}
	// Healthy receivers by capacity, largest first; the sick take evenly
	// spread ranks (the first at rank 10).
	sick, healthy := rs[:down+alwaysFail], append([]*w5Receiver(nil), rs[down+alwaysFail:]...)
	sort.SliceStable(healthy, func(i, j int) bool { return healthy[i].model.Capacity() > healthy[j].model.Capacity() })
	order := make([]*w5Receiver, 0, n)
	step := n / max(len(sick), 1)
	for rank, si, hi := 1, 0, 0; rank <= n; rank++ {
		if si < len(sick) && rank == min(10, step)+si*step {
			order = append(order, sick[si])
			si++
		} else if hi < len(healthy) {
			order = append(order, healthy[hi])
			hi++
		} else {
			order = append(order, sick[si])
			si++
		}
	}
	var h float64
	for r := 1; r <= n; r++ {
		h += 1 / math.Pow(float64(r), w5ZipfS)
	}
	for i, r := range order {
		r.rank = i + 1
		r.weight = 1 / math.Pow(float64(r.rank), w5ZipfS) / h
		r.subject = fmt.Sprintf("booking://w5-e%d", r.rank)
	}
	return order
}

// w5Rate is the events per second offered: w5Load times the largest rate
// at which no healthy receiver gets more than it can take (rate·weight ≤
// Capacity for each), so every receiver runs at most at w5Load of its
// capacity under the skew.
func w5Rate(rs []*w5Receiver) float64 {
	best := math.Inf(1)
	for _, r := range rs {
		if r.healthy() && r.weight > 0 {
			best = min(best, r.model.Capacity()/r.weight)
		}
	}
	return w5Load * best
}

// w5Respond answers as the receiver's model says: after its latency, 500,
// 429 with Retry-After: 1 or 204 by the shares drawn from answers, or no
// answer at all until the sender gives up (a hang).
func w5Respond(m ReceiverModel, answers *w5Answers) Respond {
	return func(w http.ResponseWriter, r *http.Request, _ int64) {
		u := answers.next()
		if u < m.HangRate {
			select {
			case <-r.Context().Done():
			case <-time.After(m.Timeout + 5*time.Second):
				w.WriteHeader(http.StatusGatewayTimeout)
			}
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(m.Latency):
		}
		switch {
		case m.AlwaysFail || u < m.HangRate+m.FailRate:
			w.WriteHeader(http.StatusInternalServerError)
		case u < m.HangRate+m.FailRate+m.ThrottleRate:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

// w5Sent is one published event: its receiver and when the publish call
// returned (the commit as the client sees it).
type w5Sent struct {
	receiver int
	at       time.Time
}

// w5Phase holds the figures of one W5 phase: what was offered, published
// and received.
type w5Phase struct {
	offered    []int
	published  int
	delivered  int
	late       int // not received by the deadline, still River's to deliver
	lost       int // not received by the deadline, and River is done with it
	duplicates int
	latency    *Latencies
	// first is publish to the first request, whatever its answer;
	// idealFirst the same for an engine without any latency of its own
	// (IdealWaits over the receivers' own answer times).
	first, idealFirst *Latencies
	window, drained   time.Duration
	// windows is the p99 of first in each equal window of publishing, about
	// w5WindowWidth long (one for a phase shorter than two); windowP99 their
	// median: the phase's typical window, which a stall of the whole
	// machine in one window does not decide.
	windows   []time.Duration
	windowP99 time.Duration
	// stages says where the time of the first requests went (w5Stages).
	stages string
}

// w5WindowWidth is the length of the windows a phase's healthy receipt
// p99 is taken in: five to a full phase.
const w5WindowWidth = 10 * time.Second

// runW5 is the real world: receivers with long-tailed latencies, failures,
// 429s, hangs, some down and some always failing, fed a steady skewed
// load; then the same load with the sick endpoints disabled.
func (b *ServerBench) runW5(ctx context.Context) error {
	n, down, fail := 1000, 10, 10
	// Both phases are as long: a queue that grows over a phase would
	// otherwise show as the sick endpoints' harm.
	window, warmup, drain := 50*time.Second, 10*time.Second, 20*time.Second
	if b.o.Quick {
		n, down, fail = 100, 1, 1
		window, warmup, drain = 12*time.Second, 3*time.Second, 15*time.Second
	}
	rs := w5Receivers(n, down, fail)
	owners := max(n/100, 1)
	admins := make([]*Admin, owners)
	for i := range admins {
		a, err := b.NewOwner(ctx, "w5")
		if err != nil {
			return err
		}
		admins[i] = a
	}
	if err := b.w5Endpoints(ctx, admins, rs); err != nil {
		return err
	}
	receiversRate := w5Rate(rs)
	rate := min(receiversRate, w5MaxRate)
	b.r.Extra["w5_offered_per_s"] = rate
	b.r.Extra["w5_receivers_rate_per_s"] = receiversRate
	var receiverLat Latencies
	b.r.Note("W5: %d endpoints over %d owners (%d down, %d answering 500), log-normal latencies (median %s, sigma %.2f, seeded), 10%% max_in_flight 4; %.1f events/s offered (%.0f%% of the rate at which the busiest receiver under a Zipf s=%.1f skew is full, %.1f/s, capped at %.0f/s)",
		n, owners, down, fail, w5MedianLatency, w5Sigma, rate, 100*w5Load, w5ZipfS, receiversRate, w5MaxRate)

	// sick enables or disables the down and always failing endpoints.
	sick := func(enabled bool) error {
		for _, r := range rs {
			if r.healthy() {
				continue
			}
			if err := admins[r.owner].Do(ctx, http.MethodPatch, "/api/admin/webhooks/"+r.serverID, map[string]any{"enabled": enabled}, nil); err != nil {
				return fmt.Errorf("set sick endpoint %s enabled %v: %w", r.serverID, enabled, err)
			}
		}
		return nil
	}
	// The warm-up runs at the same rate with the sick endpoints disabled
	// and records nothing: both phases that count then find the server's
	// pools, River's queues and PostgreSQL's caches of a thousand
	// endpoints warm, and the sick endpoints fail first inside the phase
	// that counts them. It waits 5 s for its deliveries, not drain: a
	// delivery of it still due (a retry) arrives in the first phase,
	// where only the phase's own events count.
	if err := sick(false); err != nil {
		return err
	}
	if _, err := b.w5Phase(ctx, admins, rs, rate, warmup, min(drain, 5*time.Second)); err != nil {
		return fmt.Errorf("W5 warm-up: %w", err)
	}
	if err := sick(true); err != nil {
		return err
	}
	b.w5Checkpoint(ctx)

	var one w5Phase
	if err := b.MeasureWork(ctx, "w5", "delivery", func() (int64, error) {
		var err error
		one, err = b.w5Phase(ctx, admins, rs, rate, window, drain)
		return int64(one.delivered), err
	}); err != nil {
		return err
	}
	// Where the lost events are: deliveries a failing endpoint's cooldown
	// scheduled minutes out.
	// The fan-out marks a cooled delivery's metadata; a delivery that ran
	// and waits minutes was snoozed behind a busy lease or retried.
	var cooling, snoozed, endpoints int64
	if err := b.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE metadata ? $3), count(*) FILTER (WHERE attempt > 0),
		count(DISTINCT args->>'endpoint_id') FROM river_job WHERE kind = $1 AND state = 'scheduled'
		AND scheduled_at > now() + interval '1 minute' AND args->>'endpoint_id' = ANY($2)`, DeliverKind, w5HealthyIDs(rs), webhookdb.WaitMetadataKey).Scan(&cooling, &snoozed, &endpoints); err != nil {
		return err
	}
	b.r.Extra["w5_healthy_deliveries_scheduled_minutes_out"] = float64(cooling + snoozed)
	b.r.Note("W5: %d deliveries to %d healthy endpoints scheduled more than a minute out after the phase with the sick endpoints: %d by a failing endpoint's cooldown, %d after a run (a busy snooze or a retry)", cooling+snoozed, endpoints, cooling, snoozed)
	if peak, err := b.Servers[0].PeakRSS(); err == nil {
		b.r.Extra["w5_server_peak_rss_mb"] = float64(peak) / (1 << 20)
	}
	for _, r := range rs {
		if r.healthy() {
			for i := 0; i < one.offered[r.rank-1]; i++ {
				receiverLat.Add(r.model.Latency)
			}
		}
	}
	models := make([]ReceiverModel, len(rs))
	for i, r := range rs {
		models[i] = r.model
	}
	ideal := IdealDeliveries(models, one.offered, one.window+drain)
	b.r.Add(Figure{Key: "w5_delivered_vs_ideal", Label: fmt.Sprintf("W5 real world, %d endpoints: deliveries", n), Unit: "",
		Value: float64(one.delivered), Ceiling: "ideal: what the receivers could take", CeilingValue: ideal})
	// Receipt is the receiver's first request of the event, whatever it
	// answers: what an owner's receiver sees of the engine. The 2xx that
	// ends a delivery comes later for the 3.5 % of answers that fail, by
	// River's retry schedule (5 s first), and is reported beside it.
	p50, p99 := one.first.Percentile(50), one.first.Percentile(99)
	s50, s99 := one.latency.Percentile(50), one.latency.Percentile(99)
	own50, own99 := receiverLat.Percentile(50), receiverLat.Percentile(99)
	b.r.Add(Figure{Key: "w5_healthy_p50_ms", Label: "W5 healthy endpoints, publish-to-receipt p50", Unit: "ms", LowerIsBetter: true,
		Value: Ms(p50), Ceiling: "their receivers' own answer time p50 + 100 ms", CeilingValue: Ms(own50) + 100})
	b.r.Add(Figure{Key: "w5_healthy_p99_ms", Label: "W5 healthy endpoints, publish-to-receipt p99", Unit: "ms", LowerIsBetter: true,
		Value: Ms(p99), Ceiling: "their receivers' own answer time p99 + 100 ms", CeilingValue: Ms(own99) + 100})
	b.r.Extra["w5_ideal_p50_ms"] = Ms(one.idealFirst.Percentile(50))
	b.r.Extra["w5_ideal_p99_ms"] = Ms(one.idealFirst.Percentile(99))
	b.r.Extra["w5_healthy_success_p50_ms"] = Ms(s50)
	b.r.Extra["w5_healthy_success_p99_ms"] = Ms(s99)
	b.r.Extra["w5_events"] = float64(one.published)
	b.r.Extra["w5_ideal"] = ideal
	b.r.Extra["w5_lost"] = float64(one.lost)
	b.r.Extra["w5_duplicates"] = float64(one.duplicates)
	b.r.Extra["w5_receivers_p99_ms"] = Ms(own99)
	b.r.Note("W5 with the sick endpoints: %d events in %.0f s, %d delivered by %.0f s after the last (ideal %.0f: %.3f), healthy publish-to-receipt p50 %.0f ms, p99 %.0f ms (their receivers answer in p50 %.0f ms, p99 %.0f ms; an engine without latency of its own: p50 %.0f ms, p99 %.0f ms), publish-to-2xx p50 %.0f ms, p99 %.0f ms, %d late, %d lost, %d duplicates",
		one.published, one.window.Seconds(), one.delivered, one.drained.Seconds(), ideal, Ratio(float64(one.delivered), ideal),
		Ms(p50), Ms(p99), Ms(own50), Ms(own99), Ms(one.idealFirst.Percentile(50)), Ms(one.idealFirst.Percentile(99)), Ms(s50), Ms(s99),
		one.late, one.lost, one.duplicates)
	b.r.Series = append(b.r.Series, one.first.Series("W5 healthy, with sick endpoints"))
	b.r.Note("W5 with the sick endpoints, where the time goes: %s", one.stages)

	// The same load with the sick endpoints disabled: their events still
	// go through publish and the fan-out, and reach no one.
	if err := sick(false); err != nil {
		return err
	}
	b.w5Checkpoint(ctx)
	two, err := b.w5Phase(ctx, admins, rs, rate, window, drain)
	if err != nil {
		return err
	}
	q50, q99 := two.first.Percentile(50), two.first.Percentile(99)
	t99 := two.latency.Percentile(99)
	b.r.Extra["w5_no_sick_p50_ms"] = Ms(q50)
	b.r.Extra["w5_no_sick_p99_ms"] = Ms(q99)
	b.r.Extra["w5_no_sick_success_p99_ms"] = Ms(t99)
	b.r.Extra["w5_no_sick_lost"] = float64(two.lost)
	b.r.Extra["w5_no_sick_duplicates"] = float64(two.duplicates)
	// Whether the sick endpoints hurt the healthy ones is read window by
	// window: a harm lasts while they are sick, and shows in most windows
	// of the phase, where a stall of the whole machine (a slow WAL flush
	// that every commit waits for, a long maintenance query of River's,
	// another process) fills one window and, through it, the p99 of
	// whichever phase it falls in.
	b.r.Extra["w5_healthy_window_p99_ms"] = Ms(one.windowP99)
	b.r.Extra["w5_no_sick_window_p99_ms"] = Ms(two.windowP99)
	b.r.Extra["w5_healthy_p99_vs_no_sick_ratio"] = Ratio(Ms(one.windowP99), Ms(two.windowP99))
	b.r.Extra["w5_healthy_pooled_p99_vs_no_sick_ratio"] = Ratio(Ms(p99), Ms(q99))
	b.r.Note("W5 without the sick endpoints: %d events in %.0f s, healthy publish-to-receipt p50 %.0f ms, p99 %.0f ms, publish-to-2xx p99 %.0f ms, %d late, %d lost, %d duplicates; healthy publish-to-receipt p99 with sick / without: %.2f by the median of the windows' p99s (%.0f / %.0f ms), %.2f over each whole phase",
		two.published, two.window.Seconds(), Ms(q50), Ms(q99), Ms(t99), two.late, two.lost, two.duplicates,
		Ratio(Ms(one.windowP99), Ms(two.windowP99)), Ms(one.windowP99), Ms(two.windowP99), Ratio(Ms(p99), Ms(q99)))
	b.r.Series = append(b.r.Series, two.first.Series("W5 healthy, without sick endpoints"))
	b.r.Note("W5 without the sick endpoints, where the time goes: %s", two.stages)

	for _, r := range rs {
		if r.ep != nil && r.ep.MaxInFlight() > int64(r.model.MaxInFlight) {
			b.Problem("W5: endpoint %s saw %d requests in flight, its max_in_flight is %d", r.ep.Name, r.ep.MaxInFlight(), r.model.MaxInFlight)
		}
		if r.ep != nil && r.ep.Invalid() > 0 {
			b.Problem("W5: endpoint %s got %d requests whose signature did not verify", r.ep.Name, r.ep.Invalid())
		}
	}
	b.r.Extra["w5_late"] = float64(one.late + two.late)
	if late := one.late + two.late; late > 0 {
		b.r.Note("W5: %d events to healthy endpoints still on River's retry schedule at the deadline (%d with the sick endpoints, %d without): not lost, late", late, one.late, two.late)
	}
	if lost := one.lost + two.lost; lost > 0 {
		b.Problem("W5: %d events to healthy endpoints lost: not received by the deadline, and their deliveries are no longer River's to run (%d with the sick endpoints, %d without)", lost, one.lost, two.lost)
	}
	if d := one.duplicates + two.duplicates; d > 0 {
		b.Problem("W5: %d duplicate deliveries", d)
	}
	return nil
}

func w5HealthyIDs(rs []*w5Receiver) []string {
	var ids []string
	for _, r := range rs {
		if r.healthy() {
			ids = append(ids, r.serverID)
		}
	}
	return ids
}

// w5Endpoints registers the receivers, rank order spread over the owners,
// eight at a time: a verifying sink endpoint each, or a loopback port with
// nothing listening for a down one.
func (b *ServerBench) w5Endpoints(ctx context.Context, admins []*Admin, rs []*w5Receiver) error {
	for i, r := range rs {
		r.owner = i % len(admins)
		if r.model.Down {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return err
			}
			r.url = "http://" + addr + "/e/w5-down"
			continue
		}
		r.answers = newW5Answers(uint64(r.rank))
		r.ep = b.Sink.Endpoint(fmt.Sprintf("w5-%d", r.rank), w5Respond(r.model, r.answers))
		r.url = r.ep.URL
	}
	var next atomic.Int64
	next.Store(-1)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i >= len(rs) || ctx.Err() != nil {
					return
				}
				r := rs[i]
				filter := json.RawMessage(fmt.Sprintf(`{"subject":{"$eq":%q}}`, r.subject))
				var created Endpoint
				if err := admins[r.owner].Do(ctx, http.MethodPost, "/api/admin/webhooks", map[string]any{
					"url": r.url, "event_types": []string{w5EventType}, "description": "bench w5",
					"max_in_flight": r.model.MaxInFlight, "timeout_seconds": int(w5Timeout / time.Second), "filter": filter,
				}, &created); err != nil {
					errs <- err
					next.Store(int64(len(rs)))
					return
				}
				r.serverID = created.ID
				if r.ep != nil {
					if err := r.ep.SetSecret(created.Secret); err != nil {
						errs <- err
						next.Store(int64(len(rs)))
						return
					}
					r.ep.ServerID = created.ID
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// w5Phase publishes events at rate for window, each to a receiver drawn by
// the Zipf weights (seeded), then waits up to drain for the healthy
// receivers to have theirs; it tallies first 2xx receipts, the lost and
// the duplicates of the events it published.
func (b *ServerBench) w5Phase(ctx context.Context, admins []*Admin, rs []*w5Receiver, rate float64, window, drain time.Duration) (w5Phase, error) {
	cum := make([]float64, len(rs))
	var c float64
	for i, r := range rs {
		c += r.weight
		cum[i] = c
	}
	total := int(rate * window.Seconds())
	rng := rand.New(rand.NewPCG(w5Seed, uint64(total)))
	targets := make([]int, total)
	ph := w5Phase{offered: make([]int, len(rs)), latency: &Latencies{}, first: &Latencies{}, idealFirst: &Latencies{}}
	for i := range targets {
		targets[i] = min(sort.SearchFloat64s(cum, rng.Float64()*c), len(rs)-1)
		ph.offered[targets[i]]++
	}
	want := make([]int64, len(rs))
	for i, r := range rs {
		if r.ep != nil {
			want[i] = r.ep.OK()
			r.answers.restart()
		}
		if r.healthy() {
			want[i] += int64(ph.offered[i])
		}
	}
	var (
		mu       sync.Mutex
		sent     = map[string]w5Sent{}
		failed   atomic.Int64
		firstErr atomic.Value
	)
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	var wg sync.WaitGroup
	for i, t := range targets {
		if ctx.Err() != nil {
			break
		}
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		wg.Add(1)
		go func(i, t int) {
			defer wg.Done()
			r := rs[t]
			var out struct {
				ID string `json:"id"`
			}
			err := admins[r.owner].Do(ctx, http.MethodPost, "/api/admin/events", map[string]any{
				"type": w5EventType, "subject": r.subject,
				"data": map[string]any{"booking_id": fmt.Sprintf("w5-%d-%d", total, i), "starts_at": "2026-12-08T09:30:00Z"},
			}, &out)
			at := time.Now()
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			mu.Lock()
			sent[out.ID] = w5Sent{receiver: t, at: at}
			mu.Unlock()
		}(i, t)
	}
	wg.Wait()
	ph.window = time.Since(start)
	if f := failed.Load(); f > 0 {
		return ph, fmt.Errorf("W5: %d of %d publish calls failed: %v", f, total, firstErr.Load())
	}
	ph.published = len(sent)
	end := time.Now()
	deadline := end.Add(drain)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		done := true
		for i, r := range rs {
			if r.healthy() && r.ep.OK() < want[i] {
				done = false
				break
			}
		}
		if done {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ph.drained = time.Since(end)
	cutoff := time.Now()
	got := make([]map[string]Arrival, len(rs))
	dups := make([]map[string]int, len(rs))
	// first holds each event's first request, whatever the answer: the
	// engine's part of the wait, without the retry schedule's.
	first := make([]map[string]Arrival, len(rs))
	for i, r := range rs {
		if r.ep == nil {
			continue
		}
		got[i], dups[i], first[i] = map[string]Arrival{}, map[string]int{}, map[string]Arrival{}
		for _, a := range r.ep.Arrivals() {
			if !a.Valid || a.At.After(cutoff) {
				continue
			}
			if f, ok := first[i][a.ID]; !ok || a.At.Before(f.At) {
				first[i][a.ID] = a
			}
			if a.Status/100 != 2 {
				continue
			}
			if _, ok := got[i][a.ID]; ok {
				dups[i][a.ID]++
				continue
			}
			got[i][a.ID] = a
		}
	}
	var missing []w5Missing
	// queued[i] are receiver i's first requests, for IdealWaits.
	queued := make([][]w5Queued, len(rs))
	var firsts []w5First
	for id, s := range sent {
		r := rs[s.receiver]
		if got[s.receiver] == nil {
			continue
		}
		ph.duplicates += dups[s.receiver][id]
		if f, ok := first[s.receiver][id]; ok && r.healthy() {
			ph.first.Add(f.At.Sub(s.at))
			firsts = append(firsts, w5First{endpointID: r.serverID, eventID: id, sent: s.at, first: f.At})
			queued[s.receiver] = append(queued[s.receiver], w5Queued{at: s.at, service: f.Done.Sub(f.At)})
		}
		a, ok := got[s.receiver][id]
		switch {
		case ok:
			ph.delivered++
			if r.healthy() {
				ph.latency.Add(a.At.Sub(s.at))
			}
		case r.healthy():
			missing = append(missing, w5Missing{endpointID: r.serverID, eventID: id})
		}
	}
	if len(sent) != total {
		return ph, errors.New("W5: publish answers without an event id")
	}
	for i, q := range queued {
		sort.Slice(q, func(a, b int) bool { return q[a].at.Before(q[b].at) })
		at, service := make([]time.Time, len(q)), make([]time.Duration, len(q))
		for k, x := range q {
			at[k], service[k] = x.at, x.service
		}
		for _, w := range IdealWaits(at, service, rs[i].model.MaxInFlight) {
			ph.idealFirst.Add(w)
		}
	}
	var err error
	ph.late, ph.lost, err = b.w5Late(ctx, missing)
	if err != nil {
		return ph, err
	}
	timed := make([]Timed, len(firsts))
	for i, f := range firsts {
		timed[i] = Timed{At: f.sent, D: f.first.Sub(f.sent)}
	}
	ph.windows = WindowP99s(timed, start, window, max(int(window/w5WindowWidth), 1))
	ph.windowP99 = Median(ph.windows)
	ph.stages, err = b.w5Stages(ctx, firsts, ph.windows)
	return ph, err
}

// w5Queued is an event's first request at its receiver: when the event
// was published and how long the receiver held the request.
type w5Queued struct {
	at      time.Time
	service time.Duration
}

// w5Missing is an event a healthy receiver had no 2xx for by the deadline.
type w5Missing struct{ endpointID, eventID string }

// w5Late splits the missing events: late ones are still River's to deliver
// (waiting, running, or scheduled on the retry schedule, whose second retry
// is minutes out), lost ones are not (finished without the receiver having
// them, or never queued).
func (b *ServerBench) w5Late(ctx context.Context, missing []w5Missing) (late, lost int, err error) {
	if len(missing) == 0 {
		return 0, 0, nil
	}
	eps, evs := make([]string, len(missing)), make([]string, len(missing))
	for i, m := range missing {
		eps[i], evs[i] = m.endpointID, m.eventID
	}
	err = b.Pool.QueryRow(ctx, `SELECT count(*) FROM unnest($2::text[], $3::text[]) AS m(endpoint_id, event_id)
		WHERE EXISTS (SELECT 1 FROM river_job j WHERE j.kind = $1
			AND j.args @> jsonb_build_object('endpoint_id', m.endpoint_id, 'event_id', m.event_id)
			AND j.state IN ('pending', 'available', 'running', 'scheduled', 'retryable'))`,
		DeliverKind, eps, evs).Scan(&late)
	if err != nil {
		return 0, 0, fmt.Errorf("W5: read the missing deliveries' jobs: %w", err)
	}
	return late, len(missing) - late, nil
}

// w5First is a healthy event's first request: which delivery, when it was
// published and when its receiver saw it.
type w5First struct {
	endpointID, eventID string
	sent, first         time.Time
}

// w5Stages says where the time goes between publish and the receiver's
// first request, for the slowest 1 % of the healthy first requests and for
// all of them: to the relay's claim of the event (fanned_out_at), to the
// fan-out's insert of the delivery job (created_at), to River's fetch
// (attempted_at, for jobs run once and never snoozed) and to the request,
// each as p50 and p99, with the count of snoozed deliveries and the p99 of
// all by window of publishing (windows).
func (b *ServerBench) w5Stages(ctx context.Context, fs []w5First, windows []time.Duration) (string, error) {
	if len(fs) == 0 {
		return "", nil
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].first.Sub(fs[i].sent) > fs[j].first.Sub(fs[j].sent) })
	slow := fs[:max(len(fs)/100, 1)]
	describe := func(set []w5First) (string, error) {
		eps, evs := make([]string, len(set)), make([]string, len(set))
		byKey := map[string]w5First{}
		for i, f := range set {
			eps[i], evs[i] = f.endpointID, f.eventID
			byKey[f.endpointID+"/"+f.eventID] = f
		}
		rows, err := b.Pool.Query(ctx, `SELECT m.endpoint_id, m.event_id, ev.fanned_out_at, j.created_at, j.attempted_at, j.attempt,
			coalesce((j.metadata->>'snoozes')::int, 0)
			FROM unnest($2::text[], $3::text[]) AS m(endpoint_id, event_id)
			JOIN events ev ON ev.id = m.event_id::uuid
			JOIN river_job j ON j.kind = $1 AND j.args->>'endpoint_id' = m.endpoint_id AND j.args->>'event_id' = m.event_id`,
			DeliverKind, eps, evs)
		if err != nil {
			return "", fmt.Errorf("W5: read the slow deliveries' jobs: %w", err)
		}
		defer rows.Close()
		var relay, fan, fetch, post Latencies
		var n, once, snoozed int
		for rows.Next() {
			var ep, ev string
			var fanned *time.Time
			var created time.Time
			var attempted *time.Time
			var attempt, snoozes int
			if err := rows.Scan(&ep, &ev, &fanned, &created, &attempted, &attempt, &snoozes); err != nil {
				return "", fmt.Errorf("W5: read the slow deliveries' jobs: %w", err)
			}
			f := byKey[ep+"/"+ev]
			n++
			if fanned != nil {
				relay.Add(fanned.Sub(f.sent))
				fan.Add(created.Sub(*fanned))
			}
			if snoozes > 0 {
				snoozed++
			}
			if attempt == 1 && snoozes == 0 && attempted != nil {
				once++
				fetch.Add(attempted.Sub(created))
				post.Add(f.first.Sub(*attempted))
			}
		}
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("W5: read the slow deliveries' jobs: %w", err)
		}
		return fmt.Sprintf("%d first requests: publish to relay p50 %.0f / p99 %.0f ms, relay to delivery job p50 %.0f / p99 %.0f ms; of the %d run once, job to fetch p50 %.0f / p99 %.0f ms, fetch to request p50 %.0f / p99 %.0f ms; %d snoozed",
			n, Ms(relay.Percentile(50)), Ms(relay.Percentile(99)), Ms(fan.Percentile(50)), Ms(fan.Percentile(99)),
			once, Ms(fetch.Percentile(50)), Ms(fetch.Percentile(99)), Ms(post.Percentile(50)), Ms(post.Percentile(99)), snoozed), nil
	}
	s, err := describe(slow)
	if err != nil {
		return "", err
	}
	s += fmt.Sprintf("; p99 in %d equal windows of publishing:", len(windows))
	for _, w := range windows {
		s += fmt.Sprintf(" %.0f", Ms(w))
	}
	a, err := describe(fs)
	if err != nil {
		return "", err
	}
	return "slowest " + s + "; all " + a, nil
}

// w5Checkpoint runs a CHECKPOINT before a phase that counts: the phase
// starts with every earlier write on disk, and no checkpoint those writes
// call for (max_wal_size) runs during it. A role that may not checkpoint
// gets a note, and the phase runs anyway.
func (b *ServerBench) w5Checkpoint(ctx context.Context) {
	if _, err := b.Pool.Exec(ctx, "CHECKPOINT"); err != nil {
		b.r.Note("W5: no CHECKPOINT before the phase: %v", err)
	}
}
