// Package eventop declares the admin ops of the event bus — list events,
// list poisoned events, release one — over the event store of
// internal/infra/events, and maps that store's errors to domain errors.
// Every op is scoped by the caller's owner: another owner's event is not
// found.
package eventop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/events"
)

// Store is what the ops need from the event store; *events.Store
// implements it.
type Store interface {
	Find(ctx context.Context, ownerID uuid.UUID, q events.Query) (events.Page, error)
	ListPoisoned(ctx context.Context, ownerID uuid.UUID, limit int, cursor string) (events.Page, error)
	Get(ctx context.Context, ownerID, eventID uuid.UUID) (events.Event, error)
	Release(ctx context.Context, ownerID, eventID uuid.UUID) (events.Event, error)
}

// Event is an event as the admin surfaces show it.
type Event struct {
	ID         uuid.UUID      `json:"id"`
	Type       string         `json:"type"`
	Subject    string         `json:"subject"`
	OccurredAt time.Time      `json:"occurred_at"`
	Data       map[string]any `json:"data"`
	// FannedOutAt is null until the relay has handed the event to its
	// subscribers; Fanout then names the River job per subscriber.
	FannedOutAt *time.Time     `json:"fanned_out_at"`
	Fanout      []FanoutTarget `json:"fanout"`
	// RelayAttempts counts failed fan-outs since the last success or
	// release; RelayError is the last failure.
	RelayAttempts int     `json:"relay_attempts"`
	RelayError    *string `json:"relay_error"`
	// PoisonedAt is set when the relay gave up; release to try again.
	PoisonedAt *time.Time `json:"poisoned_at"`
}

// FanoutTarget is one subscriber's job for an event.
type FanoutTarget struct {
	Subscriber string `json:"subscriber"`
	JobID      int64  `json:"job_id"`
}

// ListInput filters and pages events.list.
type ListInput struct {
	op.PageInput
	Type   string `json:"type,omitempty" query:"type" doc:"only events of this exact type"`
	Since  string `json:"since,omitempty" query:"since" doc:"only events that occurred at or after this RFC 3339 time"`
	Until  string `json:"until,omitempty" query:"until" doc:"only events that occurred before this RFC 3339 time"`
	Before string `json:"before,omitempty" query:"before" doc:"opaque cursor from prev_cursor: the newer page"`
}

// EventPage is a page of events with cursors both ways.
type EventPage struct {
	Data []Event `json:"data"`
	// NextCursor pages to older events (cursor=), PrevCursor to newer ones
	// (before=); each is null at its end.
	NextCursor *string `json:"next_cursor"`
	PrevCursor *string `json:"prev_cursor"`
}

// query validates a ListInput into a store query.
func (in ListInput) query() (events.Query, error) {
	q := events.Query{Type: in.Type, Cursor: in.Cursor, Before: in.Before, Limit: in.NormalizedLimit()}
	if q.Cursor != "" && q.Before != "" {
		return q, domain.Validation("INVALID_CURSOR", "give cursor or before, not both").WithField("before")
	}
	for _, t := range []struct {
		field, value string
		dst          **time.Time
	}{{"since", in.Since, &q.Since}, {"until", in.Until, &q.Until}} {
		if t.value == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.value)
		if err != nil {
			return q, domain.Validation("INVALID_TIME", t.field+" must be an RFC 3339 time such as 2026-01-02T15:04:05Z").WithField(t.field)
		}
		*t.dst = &at
	}
	if q.Since != nil && q.Until != nil && !q.Until.After(*q.Since) {
		return q, domain.Validation("INVALID_TIME", "until must be after since").WithField("until")
	}
	return q, nil
}

// PoisonedInput pages events.poisoned.
type PoisonedInput struct {
	op.PageInput
}

// IDInput names one event.
type IDInput struct {
	ID uuid.UUID `json:"id" path:"id" doc:"event id"`
}

// Ops declares the event bus's admin ops over store.
func Ops(store Store) op.Set {
	return op.Set{
		op.New(op.Meta{
			Name:    "events.list",
			Scopes:  op.Reads,
			Summary: "List events, newest first",
			Description: "Events recorded in this instance, newest first, optionally of one type and within a time range " +
				"(since inclusive, until exclusive). next_cursor pages to older events (cursor=), prev_cursor to newer ones " +
				"(before=). Shows whether and to which subscribers each was fanned out; GET /api/admin/events/{id}/deliveries " +
				"lists its webhook deliveries. Errors: INVALID_TIME, INVALID_CURSOR.",
		}, func(ctx context.Context, c op.Caller, in ListInput) (EventPage, error) {
			q, err := in.query()
			if err != nil {
				return EventPage{}, err
			}
			p, err := store.Find(ctx, c.OwnerID, q)
			if err != nil {
				return EventPage{}, mapError(err)
			}
			out, err := toPage(p)
			if err != nil {
				return EventPage{}, err
			}
			ep := EventPage{Data: out.Data, NextCursor: out.NextCursor}
			if p.PrevCursor != "" {
				c := p.PrevCursor
				ep.PrevCursor = &c
			}
			return ep, nil
		}),
		op.New(op.Meta{
			Name:    "events.poisoned",
			Scopes:  op.Reads,
			Summary: "List poisoned events",
			Description: "Events the relay gave up on after repeated fan-out failures, most recently poisoned first. " +
				"Release one once the cause is fixed.",
		}, func(ctx context.Context, c op.Caller, in PoisonedInput) (op.Page[Event], error) {
			limit := in.NormalizedLimit()
			p, err := store.ListPoisoned(ctx, c.OwnerID, limit, in.Cursor)
			if err != nil {
				return op.Page[Event]{}, mapError(err)
			}
			return toPage(p)
		}),
		op.New(op.Meta{
			Name:    "events.get",
			Scopes:  op.Reads,
			Summary: "Get an event",
		}, func(ctx context.Context, c op.Caller, in IDInput) (Event, error) {
			ev, err := store.Get(ctx, c.OwnerID, in.ID)
			if err != nil {
				return Event{}, mapError(err)
			}
			return toEvent(ev)
		}),
		op.New(op.Meta{
			Name:        "events.release",
			Summary:     "Release a poisoned event",
			Description: "Clears the event's poisoned state and failure count so the relay fans it out again.",
		}, func(ctx context.Context, c op.Caller, in IDInput) (Event, error) {
			ev, err := store.Release(ctx, c.OwnerID, in.ID)
			if err != nil {
				return Event{}, mapError(err)
			}
			return toEvent(ev)
		}),
	}
}

// mapError turns the store's errors into domain errors; anything else is
// internal and keeps its chain for the log.
func mapError(err error) error {
	switch {
	case errors.Is(err, events.ErrNotFound):
		return domain.ErrNotFound
	case errors.Is(err, events.ErrNotPoisoned):
		return domain.Conflict("EVENT_NOT_POISONED", "the event is not poisoned")
	case errors.Is(err, events.ErrBadCursor):
		return domain.Validation("INVALID_CURSOR", "the cursor is not one this list handed out").WithField("cursor")
	default:
		return fmt.Errorf("event store: %w", err)
	}
}

func toPage(p events.Page) (op.Page[Event], error) {
	out := op.Page[Event]{Data: make([]Event, len(p.Events))}
	for i, ev := range p.Events {
		var err error
		if out.Data[i], err = toEvent(ev); err != nil {
			return op.Page[Event]{}, err
		}
	}
	if p.NextCursor != "" {
		c := p.NextCursor
		out.NextCursor = &c
	}
	return out, nil
}

func toEvent(ev events.Event) (Event, error) {
	out := Event{
		ID:            ev.ID,
		Type:          ev.Type,
		Subject:       ev.Subject,
		OccurredAt:    ev.OccurredAt,
		FannedOutAt:   ev.FannedOutAt,
		RelayAttempts: ev.RelayAttempts,
		RelayError:    ev.RelayError,
		PoisonedAt:    ev.PoisonedAt,
		Data:          map[string]any{},
	}
	// Both columns are jsonb written by this system (data is checked to be an
	// object by the table), so a decoding failure means a row changed behind
	// the bus's back: the read fails with the event named.
	if len(ev.Data) > 0 {
		if err := json.Unmarshal(ev.Data, &out.Data); err != nil {
			return Event{}, fmt.Errorf("event %s: stored data: %w", ev.ID, err)
		}
	}
	if len(ev.Fanout) > 0 {
		if err := json.Unmarshal(ev.Fanout, &out.Fanout); err != nil {
			return Event{}, fmt.Errorf("event %s: stored fan-out: %w", ev.ID, err)
		}
	}
	return out, nil
}
