package deliverytest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Slots is how many lease slots each endpoint has, as in PostgreSQL: an
// endpoint's MaxInFlight (1..Slots) says how many of them it may use.
const Slots = 8

// Memory is an in-memory delivery.DeliverStore and delivery.FanoutStore:
// endpoints with their lease slots and failure state, events, the
// attempts Finish recorded and the deliveries Enqueue queued, one per
// endpoint and event. Slots expire by the wall clock, as PostgreSQL's
// busy_until does. It is safe for concurrent use.
type Memory struct {
	mu        sync.Mutex
	endpoints map[uuid.UUID]*memEndpoint
	events    map[uuid.UUID]delivery.Event
	jobs      map[[2]uuid.UUID]int64
	summaries []delivery.Summary
	takes     int
}

type memEndpoint struct {
	ep       delivery.Endpoint
	slots    [Slots]slot
	attempts []delivery.Attempt
	// tat is the rate limiter's theoretical arrival time.
	tat time.Time
	// deleted: the owner deleted it; it stays, disabled for good, as
	// PostgreSQL keeps a soft-deleted endpoint until the retention purges it.
	deleted bool
}

type slot struct {
	busyUntil time.Time
	holder    uuid.UUID
}

var (
	_ delivery.DeliverStore = (*Memory)(nil)
	_ delivery.FanoutStore  = (*Memory)(nil)
)

// NewMemory returns a store with no endpoints and no events.
func NewMemory() *Memory {
	return &Memory{endpoints: map[uuid.UUID]*memEndpoint{}, events: map[uuid.UUID]delivery.Event{}, jobs: map[[2]uuid.UUID]int64{}}
}

// Event implements delivery.FanoutStore.
func (m *Memory) Event(_ context.Context, id uuid.UUID) (delivery.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ev, ok := m.events[id]
	if !ok {
		return delivery.Event{}, fmt.Errorf("event %s: %w", id, delivery.ErrGone)
	}
	return ev, nil
}

// Endpoints implements delivery.FanoutStore: the owner's endpoints,
// enabled or not (DeleteEndpoint removes one).
func (m *Memory) Endpoints(_ context.Context, ownerID uuid.UUID) ([]delivery.Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []delivery.Endpoint
	for _, e := range m.endpoints {
		if e.ep.OwnerID == ownerID && !e.deleted {
			out = append(out, e.ep)
		}
	}
	return out, nil
}

// Enqueue implements delivery.FanoutStore: one job per endpoint and event,
// a second one is a duplicate of the first; a non-empty summary is kept.
func (m *Memory) Enqueue(_ context.Context, ds []delivery.Delivery, sum delivery.Summary) ([]delivery.Enqueued, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]delivery.Enqueued, len(ds))
	for i, d := range ds {
		key := [2]uuid.UUID{d.EndpointID, d.EventID}
		if id, ok := m.jobs[key]; ok {
			out[i] = delivery.Enqueued{JobID: id, Duplicate: true}
			continue
		}
		id := int64(len(m.jobs) + 1)
		m.jobs[key] = id
		out[i] = delivery.Enqueued{JobID: id}
	}
	if !sum.Empty() {
		m.summaries = append(m.summaries, sum)
	}
	return out, nil
}

// Summaries returns the non-empty fan-out summaries Enqueue kept, in order.
func (m *Memory) Summaries() []delivery.Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]delivery.Summary(nil), m.summaries...)
}

// PutEndpoint stores ep, keeping its slots and attempts when it exists.
func (m *Memory) PutEndpoint(ep delivery.Endpoint) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.endpoints[ep.ID]; e != nil {
		e.ep = ep
		return
	}
	m.endpoints[ep.ID] = &memEndpoint{ep: ep}
}

// Endpoint returns the endpoint as it is now.
func (m *Memory) Endpoint(id uuid.UUID) (delivery.Endpoint, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.endpoints[id]
	if e == nil {
		return delivery.Endpoint{}, false
	}
	return e.ep, true
}

// DeleteEndpoint deletes the endpoint as its owner does: it is disabled for
// good, left out of the fan-out's list, and kept until PurgeEndpoint.
func (m *Memory) DeleteEndpoint(id uuid.UUID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.endpoints[id]; e != nil {
		e.deleted, e.ep.Enabled = true, false
	}
}

// PurgeEndpoint removes the endpoint with its slots and attempts, as the
// retention does to a deleted one.
func (m *Memory) PurgeEndpoint(id uuid.UUID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.endpoints, id)
}

// PutEvent stores ev.
func (m *Memory) PutEvent(ev delivery.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events[ev.ID] = ev
}

// DeleteEvent removes the event, as retention does.
func (m *Memory) DeleteEvent(id uuid.UUID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.events, id)
}

// Attempts returns the attempts recorded for the endpoint, oldest first.
func (m *Memory) Attempts(endpointID uuid.UUID) []delivery.Attempt {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.endpoints[endpointID]; e != nil {
		return append([]delivery.Attempt(nil), e.attempts...)
	}
	return nil
}

// Holders returns how many slots of the endpoint are held now (not
// expired).
func (m *Memory) Holders(endpointID uuid.UUID) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if e := m.endpoints[endpointID]; e != nil {
		now := time.Now()
		for _, s := range e.slots {
			if s.busyUntil.After(now) {
				n++
			}
		}
	}
	return n
}

// Takes returns how many TakeLease calls the store answered.
func (m *Memory) Takes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.takes
}

func gone(id uuid.UUID) error { return fmt.Errorf("endpoint %s: %w", id, delivery.ErrGone) }

// TakeLease implements delivery.DeliverStore.
func (m *Memory) TakeLease(_ context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (delivery.Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.takes++
	e := m.endpoints[endpointID]
	if e == nil {
		return delivery.Claim{}, gone(endpointID)
	}
	c := delivery.Claim{Endpoint: e.ep}
	if ev, ok := m.events[eventID]; ok {
		c.Event = &ev
	}
	if !e.ep.Enabled || c.Event == nil {
		return c, nil
	}
	now := time.Now()
	n := min(e.ep.MaxInFlight, Slots)
	for i := range n {
		if e.slots[i].busyUntil.Before(now) {
			e.slots[i] = slot{busyUntil: now.Add(ttl), holder: token}
			c.Lease = &delivery.Lease{EndpointID: endpointID, Slot: i, Token: token}
			return c, nil
		}
	}
	return c, nil
}

// ReserveRate implements delivery.DeliverStore.
func (m *Memory) ReserveRate(_ context.Context, endpointID uuid.UUID, perSecond, burst int, maxWait time.Duration) (time.Duration, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.endpoints[endpointID]
	if e == nil {
		return 0, false, gone(endpointID)
	}
	now := time.Now()
	interval := time.Second / time.Duration(perSecond)
	tolerance := time.Duration(burst-1) * interval
	tat := e.tat
	if tat.Before(now) {
		tat = now
	}
	wait := max(tat.Sub(now)-tolerance, 0)
	if wait > maxWait {
		return wait, false, nil
	}
	e.tat = tat.Add(interval)
	return wait, true, nil
}

// Finish implements delivery.DeliverStore: it records the attempt, releases
// the lease when its token still holds the slot, and settles the endpoint
// as PostgreSQL does. A run of a
// deleted endpoint changes nothing.
func (m *Memory) Finish(_ context.Context, f delivery.Finish) (delivery.Settled, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out delivery.Settled
	id := f.EndpointID
	if id == uuid.Nil {
		switch {
		case f.Lease != nil:
			id = f.Lease.EndpointID
		case f.Attempt != nil:
			id = f.Attempt.EndpointID
		}
	}
	e := m.endpoints[id]
	if e == nil {
		return out, nil
	}
	if f.Attempt != nil {
		a := *f.Attempt
		a.EndpointID = id
		if a.At.IsZero() {
			a.At = time.Now()
		}
		e.attempts = append(e.attempts, a)
	}
	if l := f.Lease; l != nil && l.Slot >= 0 && l.Slot < Slots && e.slots[l.Slot].holder == l.Token {
		e.slots[l.Slot] = slot{}
	}
	switch f.Settle {
	case delivery.SettleSuccess:
		e.ep.FailingSince, e.ep.FailedAt = nil, nil
	case delivery.SettleFailure:
		at := f.Now
		switch {
		case !e.ep.Enabled:
		case e.ep.FailingSince == nil:
			e.ep.FailingSince, e.ep.FailedAt = &at, &at
		case !e.ep.FailingSince.After(f.Now.Add(-f.DisableAfter)):
			e.ep.Enabled, e.ep.FailedAt = false, &at
			out.Disabled = true
		case e.ep.FailedAt == nil || e.ep.FailedAt.Before(minTime(at, e.ep.FailingSince.Add(delivery.CooldownAfter))) ||
			f.Cooldown > 0 && !e.ep.FailedAt.After(at.Add(-f.Cooldown)):
			// The latest failure counts until one is CooldownAfter into
			// the streak, and again a Cooldown after it, as the
			// PostgreSQL store writes it.
			e.ep.FailedAt = &at
		}
	}
	return out, nil
}

// Wake implements delivery.DeliverStore; Memory keeps no jobs (River
// does), so there is none to wake.
func (m *Memory) Wake(context.Context, []int64) (int, []int64, error) { return 0, nil, nil }

// AttemptOutcome implements delivery.DeliverStore: the outcome of the
// last attempt recorded for job and attempt, on any endpoint.
func (m *Memory) AttemptOutcome(_ context.Context, jobID int64, attempt int) (delivery.Outcome, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var (
		out   delivery.Outcome
		found bool
	)
	for _, e := range m.endpoints {
		for _, a := range e.attempts {
			if a.JobID == jobID && a.Attempt == attempt {
				out, found = a.Outcome, true
			}
		}
	}
	return out, found, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
