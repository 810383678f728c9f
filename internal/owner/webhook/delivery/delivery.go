// Package delivery holds the webhook.fanout and webhook.deliver handlers,
// which thin River wrappers run, on ports only. River owns retries: a handler
// returns an outcome that the wrapper maps to nil, an error, river.JobSnooze
// or river.JobCancel. See docs/design/delivery.md.
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
	store                   FanoutStore
	admits                  EmbedAdmitsFunc
	clock                   domain.Clock
	cooldown, cooldownAfter time.Duration // Cooldown and CooldownAfter, scaled by BackoffScale
	filters                 filters
}

// FanoutDeps are the Fanouter's ports.
type FanoutDeps struct {
	Store        FanoutStore
	EmbedAdmits  EmbedAdmitsFunc // answers embed scope; nil: embed endpoints get no scoped event
	Clock        domain.Clock    // nil: the system clock
	BackoffScale float64         // (≥ 1) divides the cooldown as the retry schedule, for fault tests
}

// NewFanouter builds the fan-out handler.
func NewFanouter(d FanoutDeps) *Fanouter {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	cooldown, after := cooldowns(d.BackoffScale)
	return &Fanouter{store: d.Store, admits: d.EmbedAdmits, clock: d.Clock, cooldown: cooldown, cooldownAfter: after}
}

// cooldowns are Cooldown and CooldownAfter divided by scale (≥ 1).
func cooldowns(scale float64) (cooldown, after time.Duration) {
	cooldown, after = Cooldown, CooldownAfter
	if scale > 1 {
		cooldown = time.Duration(float64(cooldown) / scale)
		after = time.Duration(float64(after) / scale)
	}
	return cooldown, after
}

// coolsDown reports whether ep is down: a failure of its current streak came
// `after` or more past its first. An endpoint that failed once and has not
// been tried since is not known to be down.
func coolsDown(ep Endpoint, after time.Duration) bool {
	return ep.FailingSince != nil && ep.FailedAt != nil && !ep.FailedAt.Before(ep.FailingSince.Add(after))
}

// Fanout queues one webhook.deliver, unique by (endpoint, event), per endpoint
// of the owner that wants the event (enabled, subscribed, in scope, passing
// its filter but for a test), with the event's Summary, in one transaction; a
// down endpoint's (but a test's) are scheduled Cooldown out. A gone or
// non-Webhook event fans out to nobody. It returns the deliveries it asked
// for; an error means River retries the fan-out.
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
				// A test event is for its one endpoint: the others are not
				// worth a line.
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
	store                   DeliverStore
	poster                  Poster
	unseal                  UnsealFunc
	admits                  EmbedAdmitsFunc
	clock                   domain.Clock
	local                   *handoff
	userAgent               string
	observe                 ObserveFunc
	cooldown, cooldownAfter time.Duration // the Fanouter's: a queued delivery waits as a new one does
}

// DeliverDeps are the Deliverer's ports.
type DeliverDeps struct {
	Store  DeliverStore
	Poster Poster
	Unseal UnsealFunc
	// EmbedAdmits re-checks scope as the delivery runs, so a code revoked
	// after the fan-out counts; nil admits nothing.
	EmbedAdmits  EmbedAdmitsFunc
	Clock        domain.Clock // nil: the system clock
	Version      string       // goes into the User-Agent: StandMeet-Webhooks/<version>
	Observe      ObserveFunc  // when set, receives every run that posted
	BackoffScale float64      // (≥ 1) divides the cooldown, as FanoutDeps' does
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
	JobID       int64
	EndpointID  uuid.UUID
	EventID     uuid.UUID
	Attempt     int // River's attempt number of this run (1-based)
	MaxAttempts int // River's bound of the job (0: the package's MaxAttempts)
	// PreviousErred is true when River recorded an error for attempt Attempt-1
	// (it failed, died or timed out), whatever that run recorded itself.
	PreviousErred bool
}

// Result is how a run ended; the River wrapper maps it.
type Result struct {
	Outcome Outcome
	Snooze  time.Duration // the wait of OutcomeSnoozed
	Err     error         // why a run was retryable or discarded
	Warn    error         // a failed write that leaves the outcome standing; the wrapper logs it
	// Posted is the attempt of a run that sent (or tried to send) the POST;
	// Of is the endpoint's attempts per delivery, Class the answer's class.
	Posted *Attempt
	Of     int
	Class  string
}

// ObserveFunc receives every run that sent (or tried to send) a POST, once it
// is recorded, for the operator's signals. It must not block.
type ObserveFunc func(job DeliverJob, res Result)

func retryable(err, warn error) Result {
	return Result{Outcome: OutcomeRetryable, Err: err, Warn: warn}
}

func discarded(err, warn error) Result {
	return Result{Outcome: OutcomeDiscarded, Err: err, Warn: warn}
}

// Deliver runs one delivery: claim a slot of the endpoint's lease, re-check
// subscription and scope, sign and POST the thin body, then record, settle and
// release in one statement. See docs/design/delivery.md, One run.
func (d *Deliverer) Deliver(ctx context.Context, job DeliverJob) Result {
	d.local.back(job.EndpointID, job.JobID)
	start := d.local.begin(job.EndpointID)
	claim, snooze, err := d.claim(ctx, job, start)
	// MaxBusySnooze is the cooldown, which BackoffScale divides.
	snooze = min(snooze, d.cooldown)
	wake, short := d.local.end(job.EndpointID, job.JobID, snooze)
	if short {
		snooze = BusySnooze
	}
	warn := d.wake(ctx, job.EndpointID, wake)
	res := d.decide(ctx, job, claim, snooze, err)
	res.Warn = errors.Join(warn, res.Warn)
	if res.Posted != nil && d.observe != nil {
		d.observe(job, res)
	}
	return res
}

// recordedSuccess completes, without posting, a run whose previous attempt
// River recorded as an error while its finishing statement recorded a success
// (River's completion was lost). Only a success counts: River records a
// discard's cancel as an error too, and a run after it is a "send again".
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

// decide runs the delivery on its claim. A run that snoozes reads nothing
// more, so a down endpoint's returning retries cost no statement each.
func (d *Deliverer) decide(ctx context.Context, job DeliverJob, claim Claim, snooze time.Duration, err error) Result {
	live := err == nil && claim.Endpoint.Enabled && claim.Event != nil
	switch {
	case errors.Is(err, ErrGone):
		return discarded(errors.New("endpoint deleted"), nil)
	case err != nil:
		return retryable(fmt.Errorf("take lease of endpoint %s: %w", job.EndpointID, err), nil)
	case live && claim.Lease == nil:
		// Nothing to write: the line it leaves wakes it when it empties first.
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
	if live {
		res = d.deliverHolding(ctx, job, claim.Endpoint, *claim.Event, claim.Lease)
	} else {
		reason := "event pruned"
		if !claim.Endpoint.Enabled {
			reason = "endpoint disabled"
		}
		res = discarded(errors.New(reason), d.finish(ctx, job, Finish{Attempt: d.attempt(job, OutcomeDiscarded, reason)}))
	}
	res.Warn = errors.Join(settled.Warn, res.Warn)
	return res
}

// cooling is what is left of a down ep's cooldown before a delivery of ev
// posts (≤ 0: none); a test event posts now.
func (d *Deliverer) cooling(ep Endpoint, ev Event) time.Duration {
	if ev.Type == domain.EventWebhookTest {
		return 0
	}
	return d.cooldownLeft(ep)
}

// cooldownLeft is what is left of ep's cooldown (≤ 0: none), counted from the
// failure that last armed it (see Finish.Cooldown).
func (d *Deliverer) cooldownLeft(ep Endpoint) time.Duration {
	if !coolsDown(ep, d.cooldownAfter) {
		return 0
	}
	return ep.FailedAt.Add(d.cooldown).Sub(d.clock.Now())
}

// deliverHolding re-checks, posts and finishes a delivery holding lease.
func (d *Deliverer) deliverHolding(ctx context.Context, job DeliverJob, ep Endpoint, ev Event, lease *Lease) (res Result) {
	released, how := false, served
	release := func(f Finish) error {
		released = true
		if how == served && time.Since(lease.Written) < LeaseRefresh {
			if next := d.local.pass(ep.ID); next != nil {
				// The waiter posts under the same lease, on the endpoint as this
				// run read it, while this run's outcome is written.
				next.ch <- &passed{lease: *lease, endpoint: ep}
				d.local.passes.Add(1)
				return d.finish(ctx, job, f)
			}
		}
		// Back to PostgreSQL when nobody waits here, a failure may have
		// disabled the endpoint, or the lease has passed here for LeaseRefresh
		// (the next taker reads the endpoint afresh; another process may take it).
		d.local.release(ep.ID, how)
		f.Lease = lease
		err := d.finish(ctx, job, f)
		next, sleepers := d.local.letGo(ep.ID)
		next.sendToTake()
		return errors.Join(err, d.wake(ctx, ep.ID, sleepers))
	}
	defer func() {
		// A path that returned without releasing (a panic unwinding) releases here.
		if !released {
			res.Warn = errors.Join(res.Warn, release(Finish{}))
		}
	}()

	if !wants(ep, ev) {
		reason := "endpoint no longer subscribes to " + ev.Type
		return discarded(errors.New(reason), release(Finish{Attempt: d.attempt(job, OutcomeDiscarded, reason)}))
	}
	ok, err := inScope(ctx, d.admits, ep, ev)
	if err != nil {
		return retryable(err, release(Finish{}))
	}
	if !ok {
		reason := "event out of the endpoint's scope"
		return discarded(errors.New(reason), release(Finish{Attempt: d.attempt(job, OutcomeDiscarded, reason)}))
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
		// Our side (the sealed secret) is broken: the endpoint is not failing.
		return retryable(err, release(Finish{Attempt: d.attempt(job, OutcomeRetryable, err.Error())}))
	}

	resp, postErr := d.poster.Post(ctx, req)
	if postErr != nil && ctx.Err() != nil {
		// The job's own context ended (shutdown, job timeout): not the
		// receiver's fault either.
		return retryable(fmt.Errorf("delivery interrupted: %w", ctx.Err()), release(Finish{}))
	}
	v := classify(resp, postErr, now)
	riverMax := job.MaxAttempts
	if riverMax <= 0 {
		riverMax = MaxAttempts
	}
	if v.outcome == OutcomeRetryable && job.Attempt >= ep.Attempts() && job.Attempt < riverMax {
		// The endpoint's last attempt ends it (River's own last ends it anyway).
		v.outcome = OutcomeDiscarded
		v.reason = fmt.Sprintf("%s (attempt %d of %d, the last)", v.reason, job.Attempt, ep.Attempts())
	}
	a := d.attempt(job, v.outcome, v.reason)
	a.StatusCode, a.Latency, a.Response, a.Location = resp.StatusCode, resp.Latency, excerpt(resp.Body), v.location
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
		f.DisableReason = fmt.Sprintf("deliveries failed continuously for %d days; last: %s", DisableAfter/(24*time.Hour), v.reason)
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

// claim takes a lease slot, waiting in line here while deliveries here hold
// every slot, until MaxLocalWait from its start and less when the wait is
// hopeless. Without a lease it returns the snooze to take: above 0 exactly for
// an enabled endpoint and a live event. The caller ends its claim here, begun
// at start.
func (d *Deliverer) claim(ctx context.Context, job DeliverJob, start time.Time) (Claim, time.Duration, error) {
	id := job.EndpointID
	token, err := uuid.NewRandom()
	if err != nil {
		return Claim{}, 0, fmt.Errorf("lease token: %w", err)
	}
	deadline := start.Add(MaxLocalWait)
	if wait := d.local.cooling(id); wait > 0 {
		// Down as a take here read it: wait the cooldown out reading only the
		// event (a shared read), not with a take of its own. A test event
		// posts; a pruned one is the take's to report.
		ev, err := d.store.Event(ctx, job.EventID)
		switch {
		case err == nil && ev.Type != domain.EventWebhookTest:
			return Claim{Endpoint: Endpoint{ID: id, Enabled: true}, Event: &ev}, wait, nil
		case err != nil && !errors.Is(err, ErrGone):
			return Claim{}, 0, err
		}
	}
	if w := d.local.join(id); w != nil {
		// Its event alone is read: the slot comes from a holder here.
		ev, err := d.store.Event(ctx, job.EventID)
		if err != nil {
			dropErr := d.abandon(ctx, id, w)
			if !errors.Is(err, ErrGone) {
				return Claim{}, 0, errors.Join(err, dropErr)
			}
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
		w, next := d.local.took(id, c.Lease != nil, busy, c.Endpoint.MaxInFlight, cool)
		next.sendToTake()
		switch {
		case err != nil:
			return Claim{}, 0, err
		case c.Lease != nil, !c.Endpoint.Enabled, c.Event == nil:
			return c, 0, nil
		}
		if wait := d.cooling(c.Endpoint, *c.Event); wait > 0 {
			// Its slots are held by runs that probe it (a hanging endpoint's for
			// its whole timeout): waiting for them would hold a worker for nothing.
			return c, wait, nil
		}
		if w == nil {
			// Held elsewhere (another process, a dead holder), out of time, or
			// no room in line here.
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

// await waits on w in id's line until it is passed a lease (p), sent to take
// a slot (nil p, no snooze), its wait is hopeless or at deadline (snooze), or
// ctx ends; a waiter that gives up is off the line.
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

// abandon takes w off id's line for a run that will not use what comes to it:
// a lease passed meanwhile is dropped, a sending to take a slot handed on.
func (d *Deliverer) abandon(ctx context.Context, id uuid.UUID, w *waiter) error {
	if _, ok := d.local.giveUp(id, w, time.Time{}, false); ok {
		return nil
	}
	if p := <-w.ch; p != nil {
		return d.drop(ctx, id, p.lease)
	}
	_, next := d.local.took(id, false, false, 0, 0)
	next.sendToTake()
	return nil
}

// drop lets a lease held here go back to PostgreSQL without a run finishing
// under it, and sends the first waiter here to take a slot.
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

// wake makes jobs, deliveries of id that snoozed from its line here,
// available again once the line emptied with a success (handoff.end,
// handoff.letGo), so a line that sped up does not sit idle until they come
// back.
func (d *Deliverer) wake(ctx context.Context, id uuid.UUID, jobs []int64) error {
	if len(jobs) == 0 {
		return nil
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
	defer cancel()
	n, running, err := d.store.Wake(fctx, jobs)
	if err == nil && len(running) > 0 {
		// Runs that gave up just before, whose snoozes River records shortly
		// after: they are woken half a Stall later. Not those that ran here
		// since: one may now sleep a receiver's Retry-After.
		time.Sleep(Stall / 2)
		if again := d.local.notBack(id, jobs, running); len(again) > 0 {
			var more int
			more, _, err = d.store.Wake(fctx, again)
			n += more
		}
	} else {
		d.local.notBack(id, jobs, nil)
	}
	d.local.wakes.Add(int64(n))
	if err != nil {
		// Those not woken come back when their snoozes end.
		return fmt.Errorf("wake %d snoozed deliveries of endpoint %s: %w", len(jobs)-n, id, err)
	}
	return nil
}

// finish writes f with a context of its own, so the lease is released even
// when the run's context is done.
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

// thinEvent is the body of a delivery: never a resource's content.
type thinEvent struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Subject    string          `json:"subject"`
	OccurredAt string          `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}

// Body returns the thin JSON body of ev. It is a function of the event alone,
// so every retry sends the same bytes.
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

// request builds the POST of ev to ep at now, signed by the current secret
// and, during a rotation's grace, the previous one: a "whsec_" secret signs v1
// (HMAC), a "whsk_" one v1a (ed25519).
func (d *Deliverer) request(ep Endpoint, ev Event, now time.Time) (PostRequest, error) {
	if d.unseal == nil {
		return PostRequest{}, errors.New("no unseal function")
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
		return PostRequest{}, err
	}
	keys := []standardwebhooks.Key{cur}
	if len(ep.PrevSecretSealed) > 0 && ep.PrevSecretUntil != nil && now.Before(*ep.PrevSecretUntil) {
		prev, err := open(ep.PrevSecretSealed)
		if err != nil {
			return PostRequest{}, err
		}
		keys = append(keys, prev)
	}
	body, err := Body(ev)
	if err != nil {
		return PostRequest{}, err
	}
	h := domain.Header{}
	// Custom headers first, so ours win (validated names never collide anyway).
	// Their values are sealed like the secrets, with the same associated data.
	for k, v := range ep.Headers {
		if sealed, ok := domain.OpenSealedText(v); ok {
			plain, err := d.unseal(sealed, ad)
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

// underRate holds a lease-holding run to its endpoint's rate limit: a start
// within MaxRateWait is reserved and waited for holding the lease (at most
// max_in_flight runs wait so); a later one gives the lease back and snoozes
// until a start fits, spending no attempt. waited is false when res ends it.
func (d *Deliverer) underRate(ctx context.Context, ep Endpoint, lease *Lease, released *bool, release func(Finish) error) (res Result, waited bool) {
	wait, reserved, err := d.store.ReserveRate(ctx, ep.ID, ep.RatePerSecond, max(ep.RateBurst, 1), MaxRateWait)
	if err != nil {
		return retryable(fmt.Errorf("rate limit of endpoint %s: %w", ep.ID, err), release(Finish{})), false
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
		return retryable(fmt.Errorf("delivery interrupted: %w", ctx.Err()), release(Finish{})), false
	}
}
