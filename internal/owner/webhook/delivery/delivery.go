// Package delivery holds the owner domain's subscribers of the event bus:
// webhook.fanout and webhook.deliver, as domain handlers that a
// thin River wrapper runs. They depend only on ports: storage, the poster
// (an SSRF-guarded HTTP client), the unseal and EmbedAdmits functions the
// composition root hands in, and a clock.
//
// Retries have one owner, River: a handler returns an outcome (completed,
// retryable, snoozed, discarded) and the wrapper maps it to nil, an error,
// river.JobSnooze or river.JobCancel. Nothing here loops on a failure.
package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/filter"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// Fanouter is the webhook.fanout handler.
type Fanouter struct {
	store    FanoutStore
	admits   EmbedAdmitsFunc
	clock    domain.Clock
	cooldown time.Duration
	// cooldownAfter is CooldownAfter, scaled as cooldown.
	cooldownAfter time.Duration
	filters       filters
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
}

// NewFanouter builds the fan-out handler.
func NewFanouter(d FanoutDeps) *Fanouter {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	cooldown, after := cooldowns(d.BackoffScale)
	return &Fanouter{store: d.Store, admits: d.EmbedAdmits, clock: d.Clock, cooldown: cooldown, cooldownAfter: after}
}

// cooldowns are Cooldown and CooldownAfter divided by scale (≥ 1), as the
// retry schedule is.
func cooldowns(scale float64) (cooldown, after time.Duration) {
	cooldown, after = Cooldown, CooldownAfter
	if scale > 1 {
		cooldown = time.Duration(float64(cooldown) / scale)
		after = time.Duration(float64(after) / scale)
	}
	return cooldown, after
}

// coolsDown reports whether ep is down, its deliveries waiting out a
// cooldown: a failure of its current streak (no success between) came
// `after` or more past the streak's first failure. Time alone does not do it: an endpoint
// that failed once and has not been tried since (its next event came
// later, its retry is still to run) is not known to be down.
func coolsDown(ep Endpoint, after time.Duration) bool {
	return ep.FailingSince != nil && ep.FailedAt != nil && !ep.FailedAt.Before(ep.FailingSince.Add(after))
}

// Fanout delivers event eventID to every endpoint of its owner that wants
// it: enabled, subscribed to its type by a glob, in scope, and passing the
// endpoint's payload filter (a test event skips the filter). It inserts
// one webhook.deliver per such endpoint in one transaction, unique by
// (endpoint, event), so running it twice queues nothing new; the same
// transaction records the event's Summary: which of the owner's other
// (not deleted) endpoints got nothing and why, and which wait out a
// cooldown. Deliveries to an endpoint that has failed CooldownAfter or
// more into its failing streak are scheduled Cooldown out (not a
// webhook.test: the owner is testing now); the others are available at
// once. An event that is gone or not Webhook-exposed fans out to nobody.
// It returns how many deliveries it asked for; an error means River
// should retry the fan-out.
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
	eps, err := f.store.Endpoints(ctx, ev.OwnerID)
	if err != nil {
		return 0, fmt.Errorf("fan out %s: %w", eventID, err)
	}
	now := f.clock.Now()
	var ds []Delivery
	sum := Summary{EventID: ev.ID}
	test := ev.Type == domain.EventWebhookTest
	thin := &filter.Event{Type: ev.Type, Subject: ev.Subject, Data: ev.Data}
	for _, ep := range eps {
		reason, err := f.filters.decide(ctx, f.admits, ep, ev, thin)
		if err != nil {
			return 0, fmt.Errorf("fan out %s: %w", eventID, err)
		}
		if reason != "" {
			if !test || reason != ReasonNotSubscribed {
				// A test event is for its one endpoint: the others are
				// not worth a line.
				sum.Add(reason, ep.ID)
			}
			continue
		}
		d := Delivery{EndpointID: ep.ID, EventID: ev.ID}
		if !test && coolsDown(ep, f.cooldownAfter) {
			d.ScheduledAt, d.Wait = now.Add(f.cooldown), ReasonCoolingDown
			sum.Add(ReasonCoolingDown, ep.ID)
			sum.Until = &d.ScheduledAt
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 && sum.Empty() {
		return 0, nil
	}
	if _, err := f.store.Enqueue(ctx, ds, sum); err != nil {
		return 0, fmt.Errorf("fan out %s: %w", eventID, err)
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
	local     *handoff
	userAgent string
	observe   ObserveFunc
	// cooldown and cooldownAfter are the Fanouter's: a queued delivery of
	// a down endpoint waits the cooldown out as a new one does.
	cooldown, cooldownAfter time.Duration
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
	// Version goes into the User-Agent: StandMeet-Webhooks/<version>.
	Version string
	// Observe, when set, receives every run that posted.
	Observe ObserveFunc
	// BackoffScale (≥ 1) divides the cooldown, as FanoutDeps' does.
	BackoffScale float64
}

// NewDeliverer builds the delivery handler.
func NewDeliverer(d DeliverDeps) *Deliverer {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	cooldown, after := cooldowns(d.BackoffScale)
	return &Deliverer{
		store: d.Store, poster: d.Poster, unseal: d.Unseal, admits: d.EmbedAdmits,
		clock: d.Clock, local: newHandoff(), userAgent: "StandMeet-Webhooks/" + d.Version, observe: d.Observe,
		cooldown: cooldown, cooldownAfter: after,
	}
}

// DeliverJob is one run of a webhook.deliver job.
type DeliverJob struct {
	JobID      int64
	EndpointID uuid.UUID
	EventID    uuid.UUID
	// Attempt is River's attempt number of this run (1-based), and
	// MaxAttempts River's bound of the job (0: the package's MaxAttempts).
	Attempt     int
	MaxAttempts int
	// PreviousErred is true when River recorded an error for the previous
	// attempt (Attempt-1): it failed, or its process died or it timed out
	// and River returned it, whatever that run recorded itself.
	PreviousErred bool
}

func (j DeliverJob) riverMax() int {
	if j.MaxAttempts <= 0 {
		return MaxAttempts
	}
	return j.MaxAttempts
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
	// Posted is the attempt of a run that sent (or tried to send) the
	// POST, nil otherwise. Of is the endpoint's attempts per delivery and
	// Class the answer's class (2xx..5xx, ClassTimeout, ClassConnection,
	// ClassBlocked).
	Posted *Attempt
	Of     int
	Class  string
}

// ObserveFunc receives every run that sent (or tried to send) a POST,
// once it is recorded: the operator's signals (metrics, a log line per
// failure). It must not block.
type ObserveFunc func(job DeliverJob, res Result)

func retryable(err error) Result { return Result{Outcome: OutcomeRetryable, Err: err} }
func discarded(err error) Result { return Result{Outcome: OutcomeDiscarded, Err: err} }

// Deliver runs one delivery, as the diagram of docs/design/delivery.md has
// it:
//
//  1. Read the endpoint and the event and take a slot of the endpoint's
//     lease, in one statement (UPDATE … RETURNING; no transaction is held
//     across the POST). Endpoint deleted or disabled, event pruned:
//     discarded. Endpoint cooling down (see cooling): snoozed until the
//     cooldown ends, its slot let go (once a take here has found the
//     endpoint down, the process's other deliveries of it snooze without
//     a take). Every slot busy: while a delivery here holds one, wait in
//     line for it to be passed on, at most MaxLocalWait and less when the
//     wait is hopeless, then snooze for about the wait still ahead (the
//     run that empties the line here wakes it early); with none held
//     here, snooze at once. A run that does not snooze, after an attempt
//     that River recorded as an error while the attempt itself recorded a
//     success, completes without posting (see recordedSuccess).
//  2. Re-check that the endpoint still wants the event and that it is in
//     scope (else discarded): a code revoked after the fan-out counts.
//  3. Build the thin body {id, type, subject, occurred_at, data}, sign it
//     with the Standard Webhooks headers (both secrets during a rotation)
//     and POST it with the endpoint's custom headers.
//  4. Classify the answer (see classify), then in one statement record the
//     attempt, settle the endpoint (success clears failing_since, any
//     failure sets it and disables an endpoint failing for DisableAfter),
//     and release the lease — or pass it to a delivery of the endpoint
//     waiting here.
func (d *Deliverer) Deliver(ctx context.Context, job DeliverJob) Result {
	d.local.back(job.EndpointID, job.JobID)
	res := d.deliver(ctx, job)
	if res.Posted != nil && d.observe != nil {
		d.observe(job, res)
	}
	return res
}

// recordedSuccess ends a run whose previous attempt River recorded as an
// error while that attempt's own finishing statement recorded a success:
// the receiver has the delivery, and only River's completion was lost (the
// run's process died, or its run timed out, after it finished). The run
// completes without posting again. Only a success is taken as settled:
// River records the cancel of a discarded delivery as an error of the same
// attempt, so a discard followed by a run is the owner's "send again". A
// failed read leaves the run to post, at least once.
func (d *Deliverer) recordedSuccess(ctx context.Context, job DeliverJob) (Result, bool) {
	if !job.PreviousErred || job.Attempt < 2 {
		return Result{}, false
	}
	o, ok, err := d.store.AttemptOutcome(ctx, job.JobID, job.Attempt-1)
	if err != nil {
		return Result{Warn: fmt.Errorf("read the outcome of attempt %d: %w", job.Attempt-1, err)}, false
	}
	if !ok || o != OutcomeCompleted {
		return Result{}, false
	}
	return Result{Outcome: OutcomeCompleted}, true
}

func (d *Deliverer) deliver(ctx context.Context, job DeliverJob) Result {
	cl := d.local.begin(job.EndpointID)
	claim, snooze, err := d.claim(ctx, job, cl)
	// MaxBusySnooze is the cooldown, which BackoffScale divides.
	snooze = min(snooze, d.cooldown)
	wake, short := d.local.end(job.EndpointID, job.JobID, snooze)
	if short {
		snooze = BusySnooze
	}
	warn := d.wake(ctx, job.EndpointID, wake)
	res := d.decide(ctx, job, claim, snooze, err)
	res.Warn = errors.Join(warn, res.Warn)
	return res
}

// decide runs the delivery on its claim. A run that snoozes reads
// nothing more, so the queued retries of a down endpoint (River's
// scheduler returns them together) cost no statement of their own; every
// other run first completes if an earlier attempt did (recordedSuccess).
func (d *Deliverer) decide(ctx context.Context, job DeliverJob, claim Claim, snooze time.Duration, err error) Result {
	live := err == nil && claim.Endpoint.Enabled && claim.Event != nil
	switch {
	case errors.Is(err, ErrGone):
		return discarded(errors.New("endpoint deleted"))
	case err != nil:
		return retryable(fmt.Errorf("take lease of endpoint %s: %w", job.EndpointID, err))
	case live && claim.Lease == nil:
		// Nothing to write: the line it leaves wakes it when it empties
		// first.
		d.local.snoozes.Add(1)
		return Result{Outcome: OutcomeSnoozed, Snooze: snooze}
	case live:
		if wait := d.cooling(claim.Endpoint, *claim.Event); wait > 0 {
			return Result{Outcome: OutcomeSnoozed, Snooze: wait, Warn: d.drop(ctx, job.EndpointID, *claim.Lease)}
		}
	}
	settled, done := d.recordedSuccess(ctx, job)
	if done {
		if claim.Lease != nil {
			settled.Warn = errors.Join(settled.Warn, d.drop(ctx, job.EndpointID, *claim.Lease))
		}
		return settled
	}
	var res Result
	switch {
	case live:
		res = d.deliverHolding(ctx, job, claim.Endpoint, *claim.Event, claim.Lease)
	default:
		reason := "event pruned"
		if !claim.Endpoint.Enabled {
			reason = "endpoint disabled"
		}
		res = discarded(errors.New(reason))
		res.Warn = d.finish(ctx, job, Finish{Attempt: d.attempt(job, OutcomeDiscarded, reason)})
	}
	res.Warn = errors.Join(settled.Warn, res.Warn)
	return res
}

// cooling is how long a delivery of ev to ep waits before it posts: the
// rest of the cooldown of an endpoint that is down (coolsDown), counted
// from the failure that last armed it (a failure re-arms it once the
// cooldown has passed, see Finish.Cooldown). While it lasts the endpoint
// gets no delivery but the one test, or the probe that comes due as it
// ends, so a down receiver costs a take and a snooze per delivery per
// cooldown, not an attempt with a worker held for its timeout. 0 for a
// test event: the owner tries the endpoint now.
func (d *Deliverer) cooling(ep Endpoint, ev Event) time.Duration {
	if ev.Type == domain.EventWebhookTest {
		return 0
	}
	return d.cooldownLeft(ep)
}

// cooldownLeft is what is left of ep's cooldown (≤ 0: none).
func (d *Deliverer) cooldownLeft(ep Endpoint) time.Duration {
	if !coolsDown(ep, d.cooldownAfter) {
		return 0
	}
	return ep.FailedAt.Add(d.cooldown).Sub(d.clock.Now())
}

// deliverHolding runs steps 2-4 while holding lease.
func (d *Deliverer) deliverHolding(ctx context.Context, job DeliverJob, ep Endpoint, ev Event, lease *Lease) (res Result) {
	released, how := false, served
	release := func(f Finish) error {
		released = true
		if how == served && time.Since(lease.Written) < LeaseRefresh {
			if next := d.local.pass(ep.ID); next != nil {
				// The endpoint is as this run read it: the waiter posts
				// under the same lease while this run's outcome is written.
				next.ch <- &passed{lease: *lease, endpoint: ep}
				d.local.passes.Add(1)
				return d.finish(ctx, job, f)
			}
		}
		// Back to PostgreSQL: nobody waits here, or a failure may have
		// disabled the endpoint, or the lease went from hand to hand here
		// for LeaseRefresh (the endpoint is read afresh by the next taker,
		// and a delivery of another process that waits for it may take it
		// first).
		d.local.release(ep.ID, how)
		f.Lease = lease
		err := d.finish(ctx, job, f)
		next, sleepers := d.local.letGo(ep.ID)
		next.sendToTake()
		return errors.Join(err, d.wake(ctx, ep.ID, sleepers))
	}
	defer func() {
		// A path that returned without releasing (a panic unwinding)
		// releases here; the failure to do so is the run's warning.
		if !released {
			res.Warn = errors.Join(res.Warn, release(Finish{}))
		}
	}()

	if !wants(ep, ev) {
		res := discarded(errors.New("endpoint no longer subscribes to " + ev.Type))
		res.Warn = release(Finish{Attempt: d.attempt(job, OutcomeDiscarded, res.Err.Error())})
		return res
	}
	ok, err := inScope(ctx, d.admits, ep, ev)
	if err != nil {
		res := retryable(err)
		res.Warn = release(Finish{})
		return res
	}
	if !ok {
		res := discarded(errors.New("event out of the endpoint's scope"))
		res.Warn = release(Finish{Attempt: d.attempt(job, OutcomeDiscarded, res.Err.Error())})
		return res
	}
	if ep.RatePerSecond > 0 {
		if res, waited := d.underRate(ctx, ep, lease, &released, release); !waited {
			return res
		}
	}
	now := d.clock.Now()
	req, err := d.request(ep, ev, now)
	req.Timeout = ep.Timeout()
	if err != nil {
		// Our side (the sealed secret) is broken, not the receiver: retry
		// without marking the endpoint as failing.
		res := retryable(err)
		res.Warn = release(Finish{Attempt: d.attempt(job, OutcomeRetryable, err.Error())})
		return res
	}

	resp, postErr := d.poster.Post(ctx, req)
	if postErr != nil && ctx.Err() != nil {
		// The job's own context ended (shutdown or job timeout): not the
		// receiver's fault, so the endpoint is not marked failing.
		res := retryable(fmt.Errorf("delivery interrupted: %w", ctx.Err()))
		res.Warn = release(Finish{})
		return res
	}
	v := classify(resp, postErr, now)
	if v.outcome == OutcomeRetryable && job.Attempt >= ep.Attempts() && job.Attempt < job.riverMax() {
		// The endpoint's last attempt, before River's own last (which River
		// discards itself): this run ends the delivery.
		v.outcome = OutcomeDiscarded
		v.reason = fmt.Sprintf("%s (attempt %d of %d, the last)", v.reason, job.Attempt, ep.Attempts())
	}
	a := d.attempt(job, v.outcome, v.reason)
	a.StatusCode = resp.StatusCode
	a.Latency = resp.Latency
	a.Response = excerpt(resp.Body)
	a.Location = v.location
	a.Timestamp = req.Header.Get(standardwebhooks.HeaderTimestamp)
	a.Signature = req.Header.Get(standardwebhooks.HeaderSignature)
	f := Finish{Attempt: a, Now: now}
	switch {
	case v.failure:
		f.Settle = SettleFailure
		how = rejected
		if v.class == ClassTimeout || v.class == ClassConnection {
			how = unanswered
		}
		f.DisableAfter, f.Cooldown = DisableAfter, d.cooldown
		f.DisableReason = fmt.Sprintf("deliveries failed continuously for %s; last: %s", durationWords(DisableAfter), v.reason)
	case ep.FailingSince != nil:
		// Only a success that ends a failure writes the endpoint.
		f.Settle = SettleSuccess
	}
	warn := release(f)
	res = Result{Outcome: v.outcome, Snooze: v.snooze, Warn: warn, Posted: a, Of: ep.Attempts(), Class: v.class}
	if v.outcome != OutcomeCompleted {
		res.Err = errors.New(v.reason)
	}
	return res
}

// claim takes a lease slot. When every slot is held by deliveries here, it
// waits in line for one of them to pass its slot on, at most until
// MaxLocalWait from its start, and gives up early when the wait is
// hopeless. It returns the claim and, without a lease, the snooze to take:
// above 0 exactly when the claim is of an enabled endpoint and a live event
// and holds no lease. cl is the delivery's claim here, which the caller
// ends.
func (d *Deliverer) claim(ctx context.Context, job DeliverJob, cl *claimant) (Claim, time.Duration, error) {
	id := job.EndpointID
	token, err := uuid.NewRandom()
	if err != nil {
		return Claim{}, 0, fmt.Errorf("lease token: %w", err)
	}
	deadline := cl.start.Add(MaxLocalWait)
	if wait := d.local.cooling(id); wait > 0 {
		// The endpoint is down as a take here read it: the delivery waits
		// the cooldown out reading only its event (a read shared with the
		// others'), where a take would cost a statement of its own per
		// delivery, one endpoint's takes never sharing one. A test event
		// posts, and a pruned one is the take's to report.
		ev, err := d.store.Event(ctx, job.EventID)
		switch {
		case err == nil && ev.Type != domain.EventWebhookTest:
			return Claim{Endpoint: Endpoint{ID: id, Enabled: true}, Event: &ev}, wait, nil
		case err != nil && !errors.Is(err, ErrGone):
			return Claim{}, 0, err
		}
	}
	if w := d.local.join(id, cl); w != nil {
		// Its event alone is read: the slot comes from a holder here.
		ev, err := d.store.Event(ctx, job.EventID)
		if err != nil {
			dropErr := d.abandon(ctx, id, w)
			if !errors.Is(err, ErrGone) {
				return Claim{}, 0, errors.Join(err, dropErr)
			}
			// The claim of a pruned event.
			return Claim{Endpoint: Endpoint{ID: id, Enabled: true}}, 0, dropErr
		}
		c := Claim{Endpoint: Endpoint{ID: id, Enabled: true}, Event: &ev}
		p, snooze, err := d.await(ctx, id, w, deadline)
		if err != nil || p != nil || snooze > 0 {
			if p != nil {
				c.Endpoint, c.Lease = p.endpoint, &p.lease
			}
			return c, snooze, err
		}
		// Sent to take a slot itself.
	}
	for {
		c, err := d.store.TakeLease(ctx, id, job.EventID, token, LeaseTTL)
		cool := d.cooldownLeft(c.Endpoint)
		if c.Lease != nil {
			c.Lease.Written = time.Now()
		}
		busy := err == nil && c.Lease == nil && c.Endpoint.Enabled && c.Event != nil && time.Now().Before(deadline)
		w, next := d.local.took(id, c.Lease != nil, busy, c.Endpoint.MaxInFlight, cool, cl)
		next.sendToTake()
		switch {
		case err != nil:
			return Claim{}, 0, err
		case c.Lease != nil, !c.Endpoint.Enabled, c.Event == nil:
			return c, 0, nil
		}
		if wait := d.cooling(c.Endpoint, *c.Event); wait > 0 {
			// Its slots are held by runs that probe it (a hanging
			// endpoint's for its whole timeout): waiting in line for
			// them would hold a worker for nothing.
			return c, wait, nil
		}
		if w == nil {
			// Held elsewhere (another process, or a holder that died),
			// out of time, or no room in line here.
			return c, d.local.snooze(id), nil
		}
		p, snooze, err := d.await(ctx, id, w, deadline)
		if err != nil || snooze > 0 {
			return c, snooze, err
		}
		if p != nil {
			c.Endpoint, c.Lease = p.endpoint, &p.lease
			return c, 0, nil
		}
		// Sent to take a slot itself.
	}
}

// Stats reports what the local handoff did and holds now.
func (d *Deliverer) Stats() HandoffStats { return d.local.stats() }

// await waits in id's line on w until a holder here passes it a lease
// (p), sends it to take a slot itself (nil p, no snooze; it counts as
// taking), its wait turns hopeless or reaches deadline (the snooze to
// take), or ctx ends (ctx.Err()). A waiter that gives up is off the line.
func (d *Deliverer) await(ctx context.Context, id uuid.UUID, w *waiter, deadline time.Time) (p *passed, snooze time.Duration, err error) {
	tick := time.NewTicker(Stall / 2)
	defer tick.Stop()
	stop := time.NewTimer(time.Until(deadline))
	defer stop.Stop()
	for {
		if snooze, ok := d.local.giveUp(id, w, deadline, true); ok {
			return nil, snooze, nil
		}
		select {
		case p := <-w.ch:
			return p, 0, nil
		case <-tick.C:
			continue
		case <-stop.C:
		case <-ctx.Done():
			return nil, 0, errors.Join(ctx.Err(), d.abandon(ctx, id, w))
		}
		if snooze, ok := d.local.giveUp(id, w, deadline, false); ok {
			return nil, snooze, nil
		}
		// A holder took it off the line first: its message is on the way.
		return <-w.ch, 0, nil
	}
}

// abandon takes w off id's line for a run that will not use what comes to
// it: a lease passed meanwhile is let go (the error is drop's), and a
// sending to take a slot is handed on.
func (d *Deliverer) abandon(ctx context.Context, id uuid.UUID, w *waiter) error {
	if _, ok := d.local.giveUp(id, w, time.Time{}, false); ok {
		return nil
	}
	if p := <-w.ch; p != nil {
		return d.drop(ctx, id, p.lease)
	}
	_, next := d.local.took(id, false, false, 0, 0, nil)
	next.sendToTake()
	return nil
}

// drop lets go of a lease this process holds without a run to finish
// under it, back to PostgreSQL; the first waiter here, if any, is sent to
// take a slot. A slot whose release fails expires after LeaseTTL; the
// error says so.
func (d *Deliverer) drop(ctx context.Context, id uuid.UUID, lease Lease) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
	defer cancel()
	d.local.release(id, dropped)
	_, err := d.store.Finish(fctx, Finish{EndpointID: id, Lease: &lease, Now: d.clock.Now()})
	next, _ := d.local.letGo(id)
	next.sendToTake()
	if err != nil {
		return fmt.Errorf("release lease slot %d of endpoint %s (it expires after %s): %w", lease.Slot, id, LeaseTTL, err)
	}
	return nil
}

// wake makes jobs, the deliveries of id that snoozed here for a busy line,
// available again once that line has emptied here (handoff.wakeable):
// a snooze is an estimate of the wait ahead, from the pace the line had,
// and a line that sped up (a busy machine that let go) would otherwise sit
// idle until the first of them came back. A failing endpoint's line does
// not wake them: its deliveries wait out the cooldown anyway.
func (d *Deliverer) wake(ctx context.Context, id uuid.UUID, jobs []int64) error {
	if len(jobs) == 0 {
		return nil
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
	defer cancel()
	n, running, err := d.store.Wake(fctx, jobs)
	if err == nil && len(running) > 0 {
		// Runs that gave up just before the line emptied, whose snoozes
		// River had not recorded yet (its completer records a run's outcome
		// within about 50 ms): half a Stall later they are asleep and are
		// woken, where they would sleep out their estimate beside an empty
		// line. Only those that have not run here since: one that ran may
		// now sleep a receiver's Retry-After.
		time.Sleep(Stall / 2)
		if again := d.local.notBack(id, jobs, running); len(again) > 0 {
			var more int
			more, _, err = d.store.Wake(fctx, again)
			n += more
		}
	} else {
		d.local.notBack(id, jobs, nil)
	}
	if err != nil {
		// They come back when their snoozes end.
		return fmt.Errorf("wake %d snoozed deliveries of endpoint %s: %w", len(jobs), id, err)
	}
	d.local.wakes.Add(int64(n))
	return nil
}

// finish writes f for the run with a context of its own, so the lease is
// released even when the run's context is done.
func (d *Deliverer) finish(ctx context.Context, job DeliverJob, f Finish) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
	defer cancel()
	f.EndpointID = job.EndpointID
	if f.Now.IsZero() {
		f.Now = d.clock.Now()
	}
	if _, err := d.store.Finish(fctx, f); err != nil {
		return fmt.Errorf("finish delivery: %w", err)
	}
	return nil
}

func (d *Deliverer) attempt(job DeliverJob, o Outcome, reason string) *Attempt {
	return &Attempt{
		JobID: job.JobID, EndpointID: job.EndpointID, EventID: job.EventID,
		Attempt: job.Attempt, Outcome: o, Error: reason, At: d.clock.Now(),
	}
}

// thinEvent is the body of a delivery: the event's type, subject and ids,
// never a resource's content (the consumer reads the resource through the
// API it already uses).
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
	h := domain.Header{}
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
	h.Set(standardwebhooks.HeaderSignature, standardwebhooks.SignKeys(keys, msgID, now, body))
	return PostRequest{URL: ep.URL, Header: h, Body: body}, nil
}

// keys unseals the endpoint's signing keys: the current secret, then the
// previous one while its rotation grace lasts (both signatures are sent).
// A "whsec_" secret signs v1 (HMAC), a "whsk_" one v1a (ed25519).
func (d *Deliverer) keys(ep Endpoint, now time.Time) ([]standardwebhooks.Key, error) {
	if d.unseal == nil {
		return nil, errors.New("no unseal function")
	}
	ad := ep.ID[:]
	open := func(sealed []byte) (standardwebhooks.Key, error) {
		plain, err := d.unseal(sealed, ad)
		if err != nil {
			return standardwebhooks.Key{}, fmt.Errorf("unseal secret of endpoint %s: %w", ep.ID, err)
		}
		key, err := standardwebhooks.ParseKey(string(plain))
		if err != nil {
			return standardwebhooks.Key{}, fmt.Errorf("secret of endpoint %s: %w", ep.ID, err)
		}
		return key, nil
	}
	cur, err := open(ep.SecretSealed)
	if err != nil {
		return nil, err
	}
	keys := []standardwebhooks.Key{cur}
	if len(ep.PrevSecretSealed) > 0 && ep.PrevSecretUntil != nil && now.Before(*ep.PrevSecretUntil) {
		prev, err := open(ep.PrevSecretSealed)
		if err != nil {
			return nil, err
		}
		keys = append(keys, prev)
	}
	return keys, nil
}

// underRate holds a lease-holding run to its endpoint's rate limit before
// it posts. A start that fits within MaxRateWait is reserved and the run
// waits for its moment holding the lease (so at most max_in_flight runs of
// the endpoint wait so); one that does not fit gives the lease back and
// snoozes until a start fits, spending no attempt. waited is false when
// the run ends here with res.
func (d *Deliverer) underRate(ctx context.Context, ep Endpoint, lease *Lease, released *bool, release func(Finish) error) (res Result, waited bool) {
	wait, reserved, err := d.store.ReserveRate(ctx, ep.ID, ep.RatePerSecond, max(ep.RateBurst, 1), MaxRateWait)
	if err != nil {
		res := retryable(fmt.Errorf("rate limit of endpoint %s: %w", ep.ID, err))
		res.Warn = release(Finish{})
		return res, false
	}
	if !reserved {
		*released = true
		d.local.snoozes.Add(1)
		return Result{Outcome: OutcomeSnoozed, Snooze: max(wait, BusySnooze), Warn: d.drop(ctx, ep.ID, *lease)}, false
	}
	if wait <= 0 {
		return Result{}, true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return Result{}, true
	case <-ctx.Done():
		res := retryable(fmt.Errorf("delivery interrupted: %w", ctx.Err()))
		res.Warn = release(Finish{})
		return res, false
	}
}

// durationWords says d in an owner's words: whole days or hours as such
// ("5 days"), anything else as Go writes it.
func durationWords(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d > 0 && d%(24*time.Hour) == 0:
		return plural(int64(d/(24*time.Hour)), "day")
	case d > 0 && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	}
	return d.String()
}
