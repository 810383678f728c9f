package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/window"
)

// AlarmAfter is how long an endpoint fails before the admin raises its
// banner about it.
const AlarmAfter = time.Hour

// StatsBucket is one bucket of the delivery charts: the attempts that
// ended in it by outcome, and the latency of those that got an answer.
type StatsBucket struct {
	At time.Time `json:"at" doc:"the bucket's start"`
	// Succeeded got a 2xx; Retrying failed and were retried; GaveUp ended
	// their delivery (the last attempt, or a 4xx, a blocked address).
	Succeeded int `json:"succeeded"`
	Retrying  int `json:"retrying"`
	GaveUp    int `json:"gave_up"`
	// P50MS and P99MS are the latency percentiles in milliseconds; null
	// without an answered attempt.
	P50MS *int `json:"p50_ms"`
	P99MS *int `json:"p99_ms"`
}

// Stats are the delivery charts of a window: every bucket, oldest first,
// empty ones included.
type Stats struct {
	Window      string        `json:"window"`
	Since       time.Time     `json:"since"`
	Until       time.Time     `json:"until"`
	StepSeconds int           `json:"step_seconds"`
	Buckets     []StatsBucket `json:"buckets"`
}

// Attention is an endpoint that needs the owner: disabled by the server,
// or failing (its deliveries wait out the cooldown).
type Attention struct {
	EndpointID     uuid.UUID  `json:"endpoint_id"`
	URL            string     `json:"url"`
	State          string     `json:"state" doc:"failing or disabled"`
	FailingSince   *time.Time `json:"failing_since"`
	DisabledReason *string    `json:"disabled_reason"`
	// Alarm is true when the admin raises its banner: disabled, or
	// failing for AlarmAfter.
	Alarm bool `json:"alarm"`
}

// StatsReader reads the delivery charts and the endpoints needing
// attention. Every read is the owner's only, and bounded in time.
type StatsReader interface {
	// Stats returns the buckets of step between since and until of the
	// owner's attempts (one endpoint's when endpointID is set); buckets
	// without attempts may be left out.
	Stats(ctx context.Context, ownerID uuid.UUID, endpointID *uuid.UUID, since, until time.Time, step time.Duration) ([]StatsBucket, error)
	// Troubled returns the owner's endpoints not deleted that are failing
	// or disabled.
	Troubled(ctx context.Context, ownerID uuid.UUID) ([]Endpoint, error)
}

// WindowInput names a chart window.
type WindowInput struct {
	Window string `json:"window,omitempty" query:"window" doc:"hour, day (default) or week"`
}

// EndpointWindowInput names an endpoint and a chart window.
type EndpointWindowInput struct {
	ID     uuid.UUID `json:"id" path:"id"`
	Window string    `json:"window,omitempty" query:"window" doc:"hour, day (default) or week"`
}

// Stats returns the owner's delivery charts over the window.
func (s *Service) Stats(ctx context.Context, ownerID uuid.UUID, in WindowInput) (Stats, error) {
	return s.stats(ctx, ownerID, nil, in.Window)
}

// EndpointStats returns one of the owner's endpoints' delivery charts; an
// endpoint of another owner is not found.
func (s *Service) EndpointStats(ctx context.Context, ownerID uuid.UUID, in EndpointWindowInput) (Stats, error) {
	w, err := window.Of(in.Window)
	if err != nil {
		return Stats{}, err
	}
	if err := s.uow.Do(ctx, func(tx Tx) error {
		_, err := tx.Endpoints().Get(ctx, ownerID, in.ID)
		return err
	}); err != nil {
		return Stats{}, err
	}
	return s.stats(ctx, ownerID, &in.ID, w.Name)
}

func (s *Service) stats(ctx context.Context, ownerID uuid.UUID, endpointID *uuid.UUID, name string) (Stats, error) {
	w, err := window.Of(name)
	if err != nil {
		return Stats{}, err
	}
	since, until := w.Span(s.clock.Now())
	out := Stats{Window: w.Name, Since: since, Until: until, StepSeconds: int(w.Step.Seconds())}
	var got []StatsBucket
	if s.statsReader != nil {
		if got, err = s.statsReader.Stats(ctx, ownerID, endpointID, since, until, w.Step); err != nil {
			return Stats{}, fmt.Errorf("read delivery stats: %w", err)
		}
	}
	out.Buckets = window.Fill(w, since, until, got, func(b StatsBucket) time.Time { return b.At },
		func(b *StatsBucket, at time.Time) { b.At = at })
	return out, nil
}

// Attention lists the owner's endpoints that need them: disabled by the
// server (not by the owner) or failing, the alarming ones first.
func (s *Service) Attention(ctx context.Context, ownerID uuid.UUID) (op.List[Attention], error) {
	out := op.List[Attention]{Data: []Attention{}}
	if s.statsReader == nil {
		return out, nil
	}
	eps, err := s.statsReader.Troubled(ctx, ownerID)
	if err != nil {
		return out, fmt.Errorf("read endpoints needing attention: %w", err)
	}
	now := s.clock.Now()
	var calm []Attention
	for _, e := range eps {
		state := e.State()
		if state == StateDisabled && e.DisabledReason != nil && *e.DisabledReason == ReasonDisabledByOwner {
			continue
		}
		if state != StateDisabled && state != StateFailing {
			continue
		}
		a := Attention{EndpointID: e.ID, URL: e.URL, State: state, FailingSince: e.FailingSince, DisabledReason: e.DisabledReason}
		a.Alarm = state == StateDisabled || (e.FailingSince != nil && now.Sub(*e.FailingSince) >= AlarmAfter)
		if a.Alarm {
			out.Data = append(out.Data, a)
		} else {
			calm = append(calm, a)
		}
	}
	out.Data = append(out.Data, calm...)
	return out, nil
}
