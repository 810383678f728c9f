// Package webhooktest holds the webhook domain's in-memory unit of work —
// the endpoint store and a scripted delivery log — and the endpoint store's
// contract suite, which it and the PostgreSQL adapter both pass.
package webhooktest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// ReasonDeleted is the disabled reason the fake gives a deleted endpoint.
const ReasonDeleted = "deleted by the owner"

// Queued is a delivery the fake queued.
type Queued struct{ EndpointID, EventID uuid.UUID }

// Memory implements webhook.UnitOfWork in memory: a domaintest.Snapshot of
// the endpoints and the queued deliveries, with the fake Recorder. The
// delivery log is River's job table in production; here its reads and
// retries answer through the Func fields (nil: empty or not found).
type Memory struct {
	// DeliveriesFunc answers DeliveryStore.List.
	DeliveriesFunc func(endpointID uuid.UUID, q webhook.DeliveryQuery) ([]webhook.Delivery, error)
	// FailedFunc answers DeliveryStore.Failed; RequeueFunc receives
	// DeliveryStore.Requeue's jobs.
	FailedFunc  func(endpointID uuid.UUID) ([]webhook.FailedDelivery, error)
	RequeueFunc func(endpointID uuid.UUID, jobIDs []int64) error
	// RetryFunc answers DeliveryStore.Retry.
	RetryFunc func(endpointID uuid.UUID, jobID int64, states []string) (string, string, error)
	// RangeEventsFunc answers DeliveryStore.RangeEvents; QueueRecoveredFunc
	// DeliveryStore.QueueRecovered.
	RangeEventsFunc    func(ownerID uuid.UUID, types []string, since, until time.Time, max int) ([]delivery.Event, error)
	QueueRecoveredFunc func(endpointID uuid.UUID, eventIDs []uuid.UUID) (int, error)
	// EventDeliveriesFunc answers DeliveryStore.ListByEvent.
	EventDeliveriesFunc func(ownerID, eventID uuid.UUID, limit int) ([]webhook.EventDelivery, error)

	snap    *domaintest.Snapshot[state]
	nextJob atomic.Int64
}

type state struct {
	endpoints map[uuid.UUID]webhook.Endpoint
	queued    []Queued
	// jobs are the job ids of queued, in its order.
	jobs []int64
}

func (s state) clone() state {
	return state{endpoints: maps.Clone(s.endpoints), queued: append([]Queued(nil), s.queued...), jobs: append([]int64(nil), s.jobs...)}
}

var _ webhook.UnitOfWork = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{snap: domaintest.NewSnapshot(state{endpoints: map[uuid.UUID]webhook.Endpoint{}}, state.clone)}
}

// Do implements webhook.UnitOfWork.
func (m *Memory) Do(ctx context.Context, fn func(tx webhook.Tx) error) error {
	return m.snap.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		return fn(&memTx{m: m, st: st, rec: rec})
	})
}

// Endpoint returns the committed endpoint id, deleted ones included.
func (m *Memory) Endpoint(id uuid.UUID) (e webhook.Endpoint, ok bool) {
	m.snap.View(func(st state) { e, ok = st.endpoints[id] })
	return e, ok
}

// Endpoints returns every committed endpoint by id.
func (m *Memory) Endpoints() map[uuid.UUID]webhook.Endpoint {
	var out map[uuid.UUID]webhook.Endpoint
	m.snap.View(func(st state) { out = maps.Clone(st.endpoints) })
	return out
}

// PutEndpoint stores e as committed, outside any transaction (a test's
// setup: what the delivery handlers change behind the service's back).
func (m *Memory) PutEndpoint(e webhook.Endpoint) {
	m.snap.Update(func(st *state) { st.endpoints[e.ID] = e })
}

// Queued returns the committed queued deliveries, oldest first.
func (m *Memory) Queued() []Queued {
	var out []Queued
	m.snap.View(func(st state) { out = append(out, st.queued...) })
	return out
}

// Events returns the committed events, oldest first.
func (m *Memory) Events() []domaintest.Event { return m.snap.Recorder().Events() }

// Recorder returns the fake Recorder (Fail injects recording failures).
func (m *Memory) Recorder() *domaintest.Recorder { return m.snap.Recorder() }

type memTx struct {
	m   *Memory
	st  *state
	rec *domaintest.TxRecorder
}

func (t *memTx) Endpoints() webhook.EndpointStore  { return endpoints{t} }
func (t *memTx) Deliveries() webhook.DeliveryStore { return deliveries{t} }
func (t *memTx) Recorder() domain.Recorder         { return t.rec }

func notFound() error {
	return domain.NotFound(webhook.CodeEndpointNotFound, "webhook endpoint not found")
}

type endpoints struct{ t *memTx }

func (s endpoints) List(_ context.Context, owner uuid.UUID, q webhook.EndpointQuery) ([]webhook.Endpoint, error) {
	switch q.State {
	case "", webhook.StateEnabled, webhook.StateFailing, webhook.StateDisabled, webhook.StateDeleted:
	default:
		return nil, fmt.Errorf("list endpoints: unknown state %q", q.State)
	}
	less := func(a, b webhook.Endpoint) bool {
		if q.Sort == webhook.SortURL && a.URL != b.URL {
			return a.URL < b.URL
		}
		return bytes.Compare(a.ID[:], b.ID[:]) < 0
	}
	var out []webhook.Endpoint
	for _, e := range s.t.st.endpoints {
		after := webhook.Endpoint{}
		if q.After != nil {
			after = webhook.Endpoint{URL: q.After.URL, ID: q.After.ID}
		}
		switch {
		case e.OwnerID != owner:
		case q.State == "" && e.DeletedAt != nil, q.State != "" && e.State() != q.State:
		case q.EventType != "" && !domain.MatchAnyGlob(e.EventTypes, q.EventType):
		case q.URLContains != "" && !strings.Contains(strings.ToLower(e.URL), strings.ToLower(q.URLContains)):
		case q.After != nil && !(q.Desc && less(e, after) || !q.Desc && less(after, e)):
		default:
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) != q.Desc })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (s endpoints) Get(_ context.Context, owner, id uuid.UUID) (webhook.Endpoint, error) {
	e, ok := s.t.st.endpoints[id]
	if !ok || e.OwnerID != owner {
		return webhook.Endpoint{}, notFound()
	}
	return e, nil
}

func (s endpoints) Count(_ context.Context, owner uuid.UUID) (int, error) {
	n := 0
	for _, e := range s.t.st.endpoints {
		if e.OwnerID == owner && e.DeletedAt == nil {
			n++
		}
	}
	return n, nil
}

func (s endpoints) Insert(_ context.Context, e webhook.Endpoint) error {
	if _, dup := s.t.st.endpoints[e.ID]; dup {
		return fmt.Errorf("insert endpoint: %s exists", e.ID)
	}
	s.t.st.endpoints[e.ID] = e
	return nil
}

func (s endpoints) Update(ctx context.Context, owner, id uuid.UUID, fn func(*webhook.Endpoint) error) error {
	e, err := s.Get(ctx, owner, id)
	if err != nil {
		return err
	}
	if err := fn(&e); err != nil {
		return err
	}
	if e.DeletedAt != nil {
		return notFound()
	}
	e.ID, e.OwnerID = id, owner
	s.t.st.endpoints[id] = e
	return nil
}

func (s endpoints) Delete(ctx context.Context, owner, id uuid.UUID, at time.Time) error {
	e, err := s.Get(ctx, owner, id)
	if err != nil {
		return err
	}
	if e.DeletedAt != nil {
		return notFound()
	}
	r := ReasonDeleted
	e.DeletedAt, e.Enabled, e.DisabledReason, e.UpdatedAt = &at, false, &r, at
	s.t.st.endpoints[id] = e
	return nil
}

type deliveries struct{ t *memTx }

func (d deliveries) Enqueue(_ context.Context, endpointID, eventID uuid.UUID) (int64, error) {
	id := d.t.m.nextJob.Add(1)
	d.t.st.queued = append(d.t.st.queued, Queued{endpointID, eventID})
	d.t.st.jobs = append(d.t.st.jobs, id)
	return id, nil
}

func (d deliveries) List(_ context.Context, endpointID uuid.UUID, q webhook.DeliveryQuery) ([]webhook.Delivery, error) {
	if d.t.m.DeliveriesFunc == nil {
		return nil, nil
	}
	return d.t.m.DeliveriesFunc(endpointID, q)
}

func (d deliveries) Get(context.Context, uuid.UUID, int64) (webhook.Delivery, []webhook.Attempt, *webhook.LoggedEvent, error) {
	return webhook.Delivery{}, nil, nil, domain.NotFound(webhook.CodeDeliveryNotFound, "delivery not found")
}

func (d deliveries) Retry(_ context.Context, endpointID uuid.UUID, jobID int64, states []string) (string, string, error) {
	if d.t.m.RetryFunc == nil {
		return "", "", domain.NotFound(webhook.CodeDeliveryNotFound, "delivery not found")
	}
	return d.t.m.RetryFunc(endpointID, jobID, states)
}

func (d deliveries) RangeEvents(_ context.Context, ownerID uuid.UUID, types []string, since, until time.Time, max int) ([]delivery.Event, error) {
	if d.t.m.RangeEventsFunc == nil {
		return nil, nil
	}
	return d.t.m.RangeEventsFunc(ownerID, types, since, until, max)
}

func (d deliveries) QueueRecovered(_ context.Context, endpointID uuid.UUID, eventIDs []uuid.UUID) (int, error) {
	if d.t.m.QueueRecoveredFunc == nil {
		return len(eventIDs), nil
	}
	return d.t.m.QueueRecoveredFunc(endpointID, eventIDs)
}

func (d deliveries) ListByEvent(_ context.Context, ownerID, eventID uuid.UUID, limit int) ([]webhook.EventDelivery, error) {
	if d.t.m.EventDeliveriesFunc == nil {
		return nil, domain.ErrNotFound
	}
	return d.t.m.EventDeliveriesFunc(ownerID, eventID, limit)
}

// LatestByEvents answers from the queued deliveries: each is a job River
// has not run yet (available).
func (d deliveries) LatestByEvents(_ context.Context, ownerID uuid.UUID, eventIDs []uuid.UUID) ([]webhook.EventDelivery, error) {
	var out []webhook.EventDelivery
	for _, ev := range eventIDs {
		latest := map[uuid.UUID]int{}
		var order []uuid.UUID
		for i, q := range d.t.st.queued {
			e, ok := d.t.st.endpoints[q.EndpointID]
			if q.EventID != ev || !ok || e.OwnerID != ownerID {
				continue
			}
			if _, seen := latest[q.EndpointID]; !seen {
				order = append(order, q.EndpointID)
			}
			latest[q.EndpointID] = i
		}
		sort.Slice(order, func(a, b int) bool { return d.t.st.jobs[latest[order[a]]] < d.t.st.jobs[latest[order[b]]] })
		for _, id := range order {
			e := d.t.st.endpoints[id]
			out = append(out, webhook.EventDelivery{
				Delivery:   webhook.Delivery{JobID: d.t.st.jobs[latest[id]], EventID: ev, State: "available", MaxAttempts: min(e.MaxAttempts, delivery.MaxAttempts)},
				EndpointID: id, EndpointURL: e.URL, EndpointState: e.State()})
		}
	}
	return out, nil
}

func (d deliveries) Failed(_ context.Context, endpointID uuid.UUID) ([]webhook.FailedDelivery, error) {
	if d.t.m.FailedFunc == nil {
		return nil, nil
	}
	return d.t.m.FailedFunc(endpointID)
}

func (d deliveries) Requeue(_ context.Context, endpointID uuid.UUID, jobIDs []int64) error {
	if d.t.m.RequeueFunc == nil {
		return nil
	}
	return d.t.m.RequeueFunc(endpointID, jobIDs)
}
