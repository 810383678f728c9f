// Package subscriber holds the owner domain's subscribers of the event bus:
// webhook.fanout and webhook.deliver (seed 002), as domain handlers that a
// thin River wrapper runs. They depend only on ports: storage, the poster
// (an SSRF-guarded HTTP client), the unseal and EmbedAdmits functions the
// composition root hands in, and a clock.
//
// Retries have one owner, River: a handler returns an outcome (completed,
// retryable, snoozed, discarded) and the wrapper maps it to nil, an error,
// river.JobSnooze or river.JobCancel. Nothing here loops on a failure.
package subscriber

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// Fanouter is the webhook.fanout handler.
type Fanouter struct {
	store    FanoutStore
	admits   EmbedAdmitsFunc
	clock    domain.Clock
	cooldown time.Duration
	flow     *Flow
}

// FanoutDeps are the Fanouter's ports.
type FanoutDeps struct {
	Store FanoutStore
	// EmbedAdmits answers embed scope; nil means embed endpoints get no
	// scoped event.
	EmbedAdmits EmbedAdmitsFunc
	// Clock defaults to the system clock.
	Clock domain.Clock
	// BackoffScale (≥ 1) divides the cooldown as it divides the retry
	// schedule, so fault tests need not wait five minutes.
	BackoffScale float64
	// Flow, the deliverer's, lets the fan-out queue a delivery to an
	// endpoint with a backlog here straight into its parking lot, so the
	// delivery never wakes up only to find the endpoint busy; nil queues
	// every delivery for now.
	Flow *Flow
}

// NewFanouter builds the fan-out handler.
func NewFanouter(d FanoutDeps) *Fanouter {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	cooldown := Cooldown
	if d.BackoffScale > 1 {
		cooldown = time.Duration(float64(cooldown) / d.BackoffScale)
	}
	return &Fanouter{store: d.Store, admits: d.EmbedAdmits, clock: d.Clock, cooldown: cooldown, flow: d.Flow}
}

// Fanout delivers event eventID to every endpoint of its owner that wants
// it: enabled, subscribed to its type by a glob, and in scope. It inserts
// one webhook.deliver per such endpoint in one transaction, unique by
// (endpoint, event), so running it twice queues nothing new. Deliveries to
// an endpoint that is failing are scheduled Cooldown out (not a
// webhook.test: the owner is testing now). An event that is gone or not
// Webhook-exposed fans out to nobody. It returns how many deliveries it
// asked for; an error means River should retry the fan-out.
func (f *Fanouter) Fanout(ctx context.Context, eventID uuid.UUID) (int, error) {
	ev, err := f.store.Event(ctx, eventID)
	if errors.Is(err, ErrGone) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("fan out %s: %w", eventID, err)
	}
	if et, ok := domain.LookupEventType(ev.Type); !ok || et.Exposure != domain.Webhook {
		return 0, nil
	}
	eps, err := f.store.EnabledEndpoints(ctx, ev.OwnerID)
	if err != nil {
		return 0, fmt.Errorf("fan out %s: %w", eventID, err)
	}
	now := f.clock.Now()
	var (
		ds     []Delivery
		parked []bool
	)
	for _, ep := range eps {
		if !ep.Enabled || !wants(ep, ev) {
			continue
		}
		ok, err := inScope(ctx, f.admits, ep, ev)
		if err != nil {
			return 0, fmt.Errorf("fan out %s: %w", eventID, err)
		}
		if !ok {
			continue
		}
		d := Delivery{EndpointID: ep.ID, EventID: ev.ID}
		park := false
		switch {
		case ep.FailingSince != nil && ev.Type != domain.EventWebhookTest:
			d.ScheduledAt = now.Add(f.cooldown)
		case f.flow != nil:
			if wait, ok := f.flow.backlog(ep.ID, ep.MaxInFlight); ok {
				d.ScheduledAt, park = f.flow.opts.Now().Add(wait), true
			}
		}
		ds = append(ds, d)
		parked = append(parked, park)
	}
	if len(ds) == 0 {
		return 0, nil
	}
	res, err := f.store.Enqueue(ctx, ds)
	if err != nil {
		return 0, fmt.Errorf("fan out %s: %w", eventID, err)
	}
	for i, r := range res {
		switch {
		case f.flow == nil || i >= len(parked) || r.Duplicate:
		case parked[i]:
			f.flow.parkQueued(ds[i].EndpointID, r.JobID)
		}
	}
	return len(ds), nil
}

// Deliverer is the webhook.deliver handler.
type Deliverer struct {
	store     DeliverStore
	poster    Poster
	unseal    UnsealFunc
	admits    EmbedAdmitsFunc
	clock     domain.Clock
	flow      *Flow
	userAgent string
}

// DeliverDeps are the Deliverer's ports.
type DeliverDeps struct {
	Store  DeliverStore
	Poster Poster
	Unseal UnsealFunc
	// EmbedAdmits re-checks embed scope at delivery time, so a delivery
	// queued before a code was revoked is not sent after; nil admits
	// nothing.
	EmbedAdmits EmbedAdmitsFunc
	// Clock defaults to the system clock; it stamps webhook-timestamp and
	// the endpoint's failure state.
	Clock domain.Clock
	// Flow coordinates deliveries waiting for a busy endpoint; nil builds
	// one with the defaults.
	Flow *Flow
	// Version goes into the User-Agent: StandMeet-Webhooks/<version>.
	Version string
}

// NewDeliverer builds the delivery handler.
func NewDeliverer(d DeliverDeps) *Deliverer {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.Flow == nil {
		d.Flow = NewFlow(FlowOptions{})
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	return &Deliverer{
		store: d.Store, poster: d.Poster, unseal: d.Unseal, admits: d.EmbedAdmits,
		clock: d.Clock, flow: d.Flow, userAgent: "StandMeet-Webhooks/" + d.Version,
	}
}

// Flow returns the deliverer's flow control (stats, and Wake for releases
// heard from other replicas).
func (d *Deliverer) Flow() *Flow { return d.flow }

// ChainKeepInterval is how often KeepChains looks for stalled chains.
const ChainKeepInterval = 250 * time.Millisecond

// KeepChains restarts stalled chains until ctx ends: every
// ChainKeepInterval it makes available now the parked deliveries of
// endpoints that nothing in this process is delivering to (see
// Flow.stalled). It bounds how long a parked delivery can wait behind an
// idle endpoint to about one interval plus a River fetch.
func (d *Deliverer) KeepChains(ctx context.Context) error {
	t := time.NewTicker(ChainKeepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		d.restartStalled(ctx)
	}
}

func (d *Deliverer) restartStalled(ctx context.Context) {
	for id, pull := range d.flow.stalled() {
		if err := d.wake(ctx, id, pull); err != nil {
			// Put them back: the next tick (or their fallback) retries.
			d.flow.unpulled(id, pull)
		}
	}
}

// DeliverJob is one run of a webhook.deliver job.
type DeliverJob struct {
	JobID      int64
	EndpointID uuid.UUID
	EventID    uuid.UUID
	// Attempt is River's attempt number of this run (1-based).
	Attempt int
}

// Result is how a run ended; the River wrapper maps it.
type Result struct {
	Outcome Outcome
	// Snooze is the wait of OutcomeSnoozed.
	Snooze time.Duration
	// Err says why a run was retryable or discarded.
	Err error
	// Warn is a problem after the receiver answered (recording the attempt
	// failed): the outcome stands, the wrapper logs it.
	Warn error
}

func retryable(err error) Result { return Result{Outcome: OutcomeRetryable, Err: err} }
func discarded(err error) Result { return Result{Outcome: OutcomeDiscarded, Err: err} }

// finishTimeout bounds the write that ends a run, which must happen even
// when the run's own context is done.
const finishTimeout = 5 * time.Second

// Deliver runs one delivery, as seed 002's diagram has it:
//
//  1. Read the endpoint and the event and take a slot of the endpoint's
//     lease, in one statement (UPDATE … RETURNING; no transaction is held
//     across the POST). Endpoint deleted or disabled, event pruned:
//     discarded. Every slot busy: wait on the deck or snooze (no attempt
//     spent), see Flow.
//  2. Re-check that the endpoint still wants the event and that it is in
//     scope (else discarded): a code revoked after the fan-out counts.
//  3. Build the thin body {id, type, subject, occurred_at, data}, sign it
//     with the Standard Webhooks headers (both secrets during a rotation)
//     and POST it with the endpoint's custom headers.
//  4. Classify the answer (see classify), then in one step record the
//     attempt, settle the endpoint (success clears failing_since, any
//     failure sets it and disables an endpoint failing for DisableAfter)
//     and release the lease.
func (d *Deliverer) Deliver(ctx context.Context, job DeliverJob) Result {
	d.flow.arrived(job.EndpointID, job.JobID)
	claim, snooze, err := d.claim(ctx, job)
	switch {
	case errors.Is(err, ErrGone):
		return discarded(errors.New("endpoint deleted"))
	case err != nil:
		return retryable(fmt.Errorf("take lease of endpoint %s: %w", job.EndpointID, err))
	}
	var reason string
	switch {
	case !claim.Endpoint.Enabled:
		reason = "endpoint disabled"
	case claim.Event == nil:
		reason = "event pruned"
	case claim.Lease == nil:
		return Result{Outcome: OutcomeSnoozed, Snooze: snooze}
	default:
		return d.deliverHolding(ctx, job, claim.Endpoint, *claim.Event, claim.Lease)
	}
	res := discarded(errors.New(reason))
	res.Warn = d.finish(ctx, Finish{Attempt: d.attempt(job, OutcomeDiscarded, reason)})
	return res
}

// deliverHolding runs steps 2-4 while holding lease.
func (d *Deliverer) deliverHolding(ctx context.Context, job DeliverJob, ep Endpoint, ev Event, lease *Lease) Result {
	takenAt := d.flow.opts.Now()
	released := false
	release := func(f Finish) error {
		f.Lease = lease
		next := d.flow.promise(ep.ID)
		var (
			err    error
			handed bool
		)
		if next != nil && f.Settle == SettleSuccess {
			// The first waiter here gets the lease as it is, in memory,
			// before anything is written: its POST starts while this
			// delivery's outcome is recorded. The slot stays busy under the
			// same token; the chain renews it every LeaseRefresh.
			next.ch <- &handoff{lease: *lease, endpoint: ep}
			f.Lease = nil
			err = d.finish(ctx, f)
			released, handed = true, true
		} else {
			handed, err = d.finishPassing(ctx, f, next)
			released = err == nil
		}
		if pull := d.flow.released(ep.ID, d.flow.opts.Now().Sub(takenAt), ep.MaxInFlight, handed); len(pull) > 0 {
			// Best effort: a pull that fails leaves the jobs to their
			// fallback wake-up.
			_ = d.wake(ctx, ep.ID, pull)
		}
		return err
	}
	defer func() {
		if !released {
			// A failed write leaves the slot to expire after LeaseTTL;
			// try once more so the endpoint does not stall that long.
			_ = d.finish(ctx, Finish{Lease: lease, Announce: true})
		}
	}()

	if !wants(ep, ev) {
		res := discarded(errors.New("endpoint no longer subscribes to " + ev.Type))
		res.Warn = release(Finish{Attempt: d.attempt(job, OutcomeDiscarded, res.Err.Error())})
		return res
	}
	ok, err := inScope(ctx, d.admits, ep, ev)
	if err != nil {
		_ = release(Finish{})
		return retryable(err)
	}
	if !ok {
		res := discarded(errors.New("event out of the endpoint's scope"))
		res.Warn = release(Finish{Attempt: d.attempt(job, OutcomeDiscarded, res.Err.Error())})
		return res
	}
	now := d.clock.Now()
	req, err := d.request(ep, ev, now)
	if err != nil {
		// Our side (the sealed secret) is broken, not the receiver: retry
		// without marking the endpoint as failing.
		_ = release(Finish{Attempt: d.attempt(job, OutcomeRetryable, err.Error())})
		return retryable(err)
	}

	resp, postErr := d.poster.Post(ctx, req)
	if postErr != nil && ctx.Err() != nil {
		// The job's own context ended (shutdown or job timeout): not the
		// receiver's fault, so the endpoint is not marked failing.
		_ = release(Finish{})
		return retryable(fmt.Errorf("delivery interrupted: %w", ctx.Err()))
	}
	v := classify(resp, postErr, now)
	a := d.attempt(job, v.outcome, v.reason)
	a.StatusCode = resp.StatusCode
	a.Latency = resp.Latency
	a.Response = excerpt(resp.Body)
	a.Location = v.location
	f := Finish{Attempt: a, Settle: SettleSuccess, Now: now}
	if v.failure {
		f.Settle = SettleFailure
		f.DisableAfter = DisableAfter
		f.DisableReason = fmt.Sprintf("deliveries failed continuously for %s; last: %s", DisableAfter, v.reason)
	}
	warn := release(f)
	res := Result{Outcome: v.outcome, Snooze: v.snooze, Warn: warn}
	if v.outcome != OutcomeCompleted {
		res.Err = errors.New(v.reason)
	}
	return res
}

// finishPassing ends a delivery whose lease cannot pass in memory (a
// failure, which may disable the endpoint, or an outcome that never reached
// it): the first waiter here, next, gets the lease in the same write, if
// the endpoint still takes deliveries; otherwise the lease is released and
// next is told to try again. It reports whether the lease passed.
func (d *Deliverer) finishPassing(ctx context.Context, f Finish, next *waiter) (bool, error) {
	var nextLease Lease
	if next != nil {
		nextLease = Lease{EndpointID: f.Lease.EndpointID, Slot: f.Lease.Slot, Token: uuid.New()}
		f.HandTo, f.HandTTL = nextLease.Token, LeaseTTL
	}
	f.Announce = next == nil && !d.flow.hasWaiter(f.Lease.EndpointID)
	settled, err := d.finishSettled(ctx, f)
	if next == nil {
		return false, err
	}
	if err != nil || settled.HandedOver == nil {
		next.ch <- nil
		return false, err
	}
	nextLease.Written = d.flow.opts.Now()
	next.ch <- &handoff{lease: nextLease, endpoint: *settled.HandedOver}
	return true, nil
}

// wake makes parked deliveries the chain pulled available now, and puts
// back those still running, to be pulled again. On an error nothing was
// woken; the caller decides what becomes of the pull.
func (d *Deliverer) wake(ctx context.Context, id uuid.UUID, pull []int64) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	running, err := d.store.WakeDeliveries(wctx, pull)
	cancel()
	if err != nil {
		return err
	}
	d.flow.unpulled(id, running)
	return nil
}

// claim takes a lease slot, waiting on the deck when the endpoint is busy
// and it fits there. Without a lease it returns the paced snooze.
func (d *Deliverer) claim(ctx context.Context, job DeliverJob) (Claim, time.Duration, error) {
	token, err := uuid.NewRandom()
	if err != nil {
		return Claim{}, 0, fmt.Errorf("lease token: %w", err)
	}
	id := job.EndpointID
	var (
		w        *waiter
		deadline *time.Timer
	)
	defer func() {
		if w != nil {
			deadline.Stop()
			if !d.flow.leave(id, w) {
				// A holder promised this waiter its lease, but the run
				// ends without it: take the handoff and let it go.
				go d.dropHandoff(ctx, w)
			}
		}
	}()
	handed := func(c Claim, h *handoff) (Claim, error) {
		w = nil // the promise is kept: nothing to leave
		deadline.Stop()
		lease := h.lease
		c.Endpoint = h.endpoint
		if now := d.flow.opts.Now(); now.Sub(lease.Written) >= LeaseRefresh {
			ep, held, err := d.store.RenewLease(ctx, lease, LeaseTTL)
			if err != nil {
				// Nobody else can use the slot until it expires: free it.
				_ = d.finish(ctx, Finish{Lease: &lease, Announce: true})
				return Claim{}, err
			}
			c.Endpoint = ep
			if !held {
				// Lost or no longer wanted: deliver nothing under it. A
				// disabled endpoint discards; otherwise this snoozes.
				_ = d.finish(ctx, Finish{Lease: &lease, Announce: true})
				c.Lease = nil
				return c, nil
			}
			lease.Written = now
		}
		d.flow.taken(id)
		c.Lease = &lease
		return c, nil
	}
	for {
		c, err := d.store.TakeLease(ctx, id, job.EventID, token, LeaseTTL)
		if err != nil {
			return Claim{}, 0, err
		}
		if c.Lease != nil || !c.Endpoint.Enabled || c.Event == nil {
			if c.Lease != nil {
				c.Lease.Written = d.flow.opts.Now()
				d.flow.taken(id)
			}
			return c, 0, nil
		}
		if w == nil {
			if w = d.flow.join(id); w == nil {
				return c, d.flow.park(id, job.JobID), nil
			}
			deadline = time.NewTimer(d.flow.opts.MaxDeckWait)
			// Try again at once: a release between the failed take and
			// the join signalled nobody.
			continue
		}
		recheck := time.NewTimer(d.flow.opts.Recheck)
		select {
		case h := <-w.ch:
			recheck.Stop()
			if h != nil {
				c, err := handed(c, h)
				return c, d.snoozeIfNoLease(id, job.JobID, c), err
			}
		case <-recheck.C:
		case <-deadline.C:
			recheck.Stop()
			d.flow.deckTimeouts.Add(1)
			if !d.flow.leave(id, w) {
				// Promised meanwhile: the handoff is one write away.
				if h := <-w.ch; h != nil {
					c, err := handed(c, h)
					return c, d.snoozeIfNoLease(id, job.JobID, c), err
				}
			}
			w = nil
			return c, d.flow.park(id, job.JobID), nil
		case <-ctx.Done():
			recheck.Stop()
			return Claim{}, 0, ctx.Err()
		}
	}
}

// snoozeIfNoLease parks a delivery whose passed lease could not be kept
// and returns its snooze; 0 when it holds a lease or has nothing to wait
// for.
func (d *Deliverer) snoozeIfNoLease(id uuid.UUID, jobID int64, c Claim) time.Duration {
	if c.Lease != nil || !c.Endpoint.Enabled || c.Event == nil {
		return 0
	}
	return d.flow.park(id, jobID)
}

// dropHandoff receives the message promised to w, which no longer wants
// it, and releases the lease it carries (if any), announcing the release so
// that any waiter takes it.
func (d *Deliverer) dropHandoff(ctx context.Context, w *waiter) {
	if h := <-w.ch; h != nil {
		_ = d.finish(ctx, Finish{Lease: &h.lease, Announce: true})
		d.flow.signal(h.lease.EndpointID)
	}
}

// finish writes f with a context of its own, so the lease is released even
// when the run's context is done.
func (d *Deliverer) finish(ctx context.Context, f Finish) error {
	_, err := d.finishSettled(ctx, f)
	return err
}

// finishSettled is finish, returning what the store did.
func (d *Deliverer) finishSettled(ctx context.Context, f Finish) (Settled, error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if f.Now.IsZero() {
		f.Now = d.clock.Now()
	}
	settled, err := d.store.Finish(fctx, f)
	if err != nil {
		return settled, fmt.Errorf("finish delivery: %w", err)
	}
	return settled, nil
}

func (d *Deliverer) attempt(job DeliverJob, o Outcome, reason string) *Attempt {
	return &Attempt{
		JobID: job.JobID, EndpointID: job.EndpointID, EventID: job.EventID,
		Attempt: job.Attempt, Outcome: o, Error: reason, At: d.clock.Now(),
	}
}

// thinEvent is the body of a delivery: the event's type, subject and ids,
// never a resource's content (seed 002: the consumer reads the resource
// through the API it already uses).
type thinEvent struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Subject    string          `json:"subject"`
	OccurredAt string          `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}

// Body returns the thin JSON body of ev. It is a function of the event
// alone, so every retry sends the same bytes.
func Body(ev Event) ([]byte, error) {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	b, err := json.Marshal(thinEvent{
		ID: ev.ID.String(), Type: ev.Type, Subject: ev.Subject,
		OccurredAt: ev.OccurredAt.UTC().Format(time.RFC3339Nano), Data: data,
	})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return b, nil
}

// request builds the signed POST of ev to ep at now.
func (d *Deliverer) request(ep Endpoint, ev Event, now time.Time) (PostRequest, error) {
	keys, err := d.keys(ep, now)
	if err != nil {
		return PostRequest{}, err
	}
	body, err := Body(ev)
	if err != nil {
		return PostRequest{}, err
	}
	h := http.Header{}
	// Custom headers first: the validated names never collide with ours,
	// and ours are set after so they win regardless. Their values are
	// sealed like the secrets, with the same associated data.
	for k, v := range ep.Headers {
		if sealed, ok := domain.OpenSealedText(v); ok {
			plain, err := d.unseal(sealed, ep.ID[:])
			if err != nil {
				return PostRequest{}, fmt.Errorf("unseal header %s of endpoint %s: %w", k, ep.ID, err)
			}
			v = string(plain)
		}
		h.Set(k, v)
	}
	msgID := ev.ID.String()
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", d.userAgent)
	h.Set(standardwebhooks.HeaderID, msgID)
	h.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderSignature, standardwebhooks.SignAll(keys, msgID, now, body))
	return PostRequest{URL: ep.URL, Header: h, Body: body}, nil
}

// keys unseals the endpoint's signing keys: the current secret, then the
// previous one while its rotation grace lasts (both signatures are sent).
func (d *Deliverer) keys(ep Endpoint, now time.Time) ([][]byte, error) {
	if d.unseal == nil {
		return nil, errors.New("no unseal function")
	}
	ad := ep.ID[:]
	open := func(sealed []byte) ([]byte, error) {
		plain, err := d.unseal(sealed, ad)
		if err != nil {
			return nil, fmt.Errorf("unseal secret of endpoint %s: %w", ep.ID, err)
		}
		key, err := standardwebhooks.ParseSecret(string(plain))
		if err != nil {
			return nil, fmt.Errorf("secret of endpoint %s: %w", ep.ID, err)
		}
		return key, nil
	}
	cur, err := open(ep.SecretSealed)
	if err != nil {
		return nil, err
	}
	keys := [][]byte{cur}
	if len(ep.PrevSecretSealed) > 0 && ep.PrevSecretUntil != nil && now.Before(*ep.PrevSecretUntil) {
		prev, err := open(ep.PrevSecretSealed)
		if err != nil {
			return nil, err
		}
		keys = append(keys, prev)
	}
	return keys, nil
}
