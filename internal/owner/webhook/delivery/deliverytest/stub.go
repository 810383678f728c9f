// Package deliverytest holds the delivery package's test doubles: Stub, a
// scripted fake of its stores; Poster, a scripted Poster; Memory, an
// in-memory DeliverStore that keeps endpoint leases, attempts and the
// endpoints' failure state; and the DeliverStore contract, which Memory and
// the PostgreSQL adapter both pass.
package deliverytest

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Stub implements delivery.FanoutStore and delivery.DeliverStore by
// calling its Func fields; a nil WakeFunc wakes nothing, a nil AttemptOutcomeFunc finds no attempt
// recorded, any other nil Func panics when called.
type Stub struct {
	EventFunc       func(ctx context.Context, id uuid.UUID) (delivery.Event, error)
	EndpointsFunc   func(ctx context.Context, ownerID uuid.UUID) ([]delivery.Endpoint, error)
	EnqueueFunc     func(ctx context.Context, ds []delivery.Delivery) ([]delivery.Enqueued, error)
	TakeLeaseFunc   func(ctx context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (delivery.Claim, error)
	FinishFunc      func(ctx context.Context, f delivery.Finish) (delivery.Settled, error)
	ReserveRateFunc func(ctx context.Context, endpointID uuid.UUID, perSecond, burst int, maxWait time.Duration) (time.Duration, bool, error)
	WakeFunc        func(ctx context.Context, jobs []int64) (int, []int64, error)
	// AttemptOutcomeFunc answers AttemptOutcome.
	AttemptOutcomeFunc func(ctx context.Context, jobID int64, attempt int) (delivery.Outcome, bool, error)

	mu        sync.Mutex
	summaries []delivery.Summary
}

var (
	_ delivery.FanoutStore  = (*Stub)(nil)
	_ delivery.DeliverStore = (*Stub)(nil)
)

// Summaries returns the non-empty fan-out summaries Enqueue was given, in
// order.
func (s *Stub) Summaries() []delivery.Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery.Summary(nil), s.summaries...)
}

// Event calls EventFunc.
func (s *Stub) Event(ctx context.Context, id uuid.UUID) (delivery.Event, error) {
	return s.EventFunc(ctx, id)
}

// Endpoints calls EndpointsFunc.
func (s *Stub) Endpoints(ctx context.Context, ownerID uuid.UUID) ([]delivery.Endpoint, error) {
	return s.EndpointsFunc(ctx, ownerID)
}

// Enqueue keeps sum when it is not empty and calls EnqueueFunc.
func (s *Stub) Enqueue(ctx context.Context, ds []delivery.Delivery, sum delivery.Summary) ([]delivery.Enqueued, error) {
	if !sum.Empty() {
		s.mu.Lock()
		s.summaries = append(s.summaries, sum)
		s.mu.Unlock()
	}
	return s.EnqueueFunc(ctx, ds)
}

// TakeLease calls TakeLeaseFunc.
func (s *Stub) TakeLease(ctx context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (delivery.Claim, error) {
	return s.TakeLeaseFunc(ctx, endpointID, eventID, token, ttl)
}

// Finish calls FinishFunc.
func (s *Stub) Finish(ctx context.Context, f delivery.Finish) (delivery.Settled, error) {
	return s.FinishFunc(ctx, f)
}

// ReserveRate calls ReserveRateFunc; without one every start is reserved
// at once.
func (s *Stub) ReserveRate(ctx context.Context, endpointID uuid.UUID, perSecond, burst int, maxWait time.Duration) (time.Duration, bool, error) {
	if s.ReserveRateFunc == nil {
		return 0, true, nil
	}
	return s.ReserveRateFunc(ctx, endpointID, perSecond, burst, maxWait)
}

// Wake calls WakeFunc, or wakes nothing when it is nil.
func (s *Stub) Wake(ctx context.Context, jobs []int64) (int, []int64, error) {
	if s.WakeFunc == nil {
		return 0, nil, nil
	}
	return s.WakeFunc(ctx, jobs)
}

// AttemptOutcome calls AttemptOutcomeFunc, or finds nothing recorded when
// it is nil.
func (s *Stub) AttemptOutcome(ctx context.Context, jobID int64, attempt int) (delivery.Outcome, bool, error) {
	if s.AttemptOutcomeFunc == nil {
		return "", false, nil
	}
	return s.AttemptOutcomeFunc(ctx, jobID, attempt)
}

// Poster implements delivery.Poster by calling PostFunc.
type Poster struct {
	PostFunc func(ctx context.Context, req delivery.PostRequest) (delivery.PostResponse, error)
}

var _ delivery.Poster = (*Poster)(nil)

// Post calls PostFunc.
func (p *Poster) Post(ctx context.Context, req delivery.PostRequest) (delivery.PostResponse, error) {
	return p.PostFunc(ctx, req)
}
