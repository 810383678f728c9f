package web_test

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// The fakes below declare ops with the contract's names and the domains'
// own input and output types over an in-memory store whose answers a test
// sets (counts, dead letters, poisoned events), so the UI resolves and
// calls them through the same typed handles as the real ones. The tests in
// handles_test.go drive the pages with the domains' real ops instead.

// withState sets the state the service derives from the fields.
func withState(e webhook.View) webhook.View {
	e.State = "enabled"
	switch {
	case !e.Enabled:
		e.State = "disabled"
	case e.FailingSince != nil:
		e.State = "failing"
	}
	return e
}

func orDefault(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// world is the fakes' store, one owner's rows per OwnerID.
type world struct {
	mu         sync.Mutex
	endpoints  map[uuid.UUID]webhook.View
	owners     map[uuid.UUID]uuid.UUID
	deliveries map[uuid.UUID][]webhook.Delivery
	sources    map[uuid.UUID]inbound.SourceView
	messages   map[uuid.UUID][]inbound.MessageView
	poisoned   []eventop.Event
	nextJob    int64
	// calls counts op calls by name.
	calls map[string]int
}

func newWorld() *world {
	return &world{
		endpoints: map[uuid.UUID]webhook.View{}, owners: map[uuid.UUID]uuid.UUID{},
		deliveries: map[uuid.UUID][]webhook.Delivery{}, sources: map[uuid.UUID]inbound.SourceView{},
		messages: map[uuid.UUID][]inbound.MessageView{}, nextJob: 100, calls: map[string]int{},
	}
}

func (w *world) count(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[name]
}

func (w *world) endpoint(c op.Caller, id uuid.UUID) (webhook.View, error) {
	e, ok := w.endpoints[id]
	if !ok || w.owners[id] != c.OwnerID {
		return webhook.View{}, domain.ErrNotFound
	}
	return e, nil
}

func (w *world) source(c op.Caller, id uuid.UUID) (inbound.SourceView, error) {
	s, ok := w.sources[id]
	if !ok || w.owners[id] != c.OwnerID {
		return inbound.SourceView{}, domain.ErrNotFound
	}
	return s, nil
}

// declare wraps a handler so it runs under the store's lock and is counted.
func declare[In, Out any](w *world, m op.Meta, fn func(c op.Caller, in In) (Out, error)) op.Descriptor {
	return op.New(m, func(_ context.Context, c op.Caller, in In) (Out, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls[m.Name]++
		return fn(c, in)
	})
}

func ptr[T any](v T) *T { return &v }

func (w *world) ops() op.Set {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return op.Set{
		declare(w, op.Meta{Name: "webhooks.list"}, func(c op.Caller, _ webhook.ListInput) (op.Page[webhook.View], error) {
			var rows []webhook.View
			for id, e := range w.endpoints {
				if w.owners[id] == c.OwnerID {
					rows = append(rows, e)
				}
			}
			return op.NewPage(rows, 50, func(e webhook.View) string { return e.ID.String() }), nil
		}),
		declare(w, op.Meta{Name: "webhooks.get"}, func(c op.Caller, in webhook.IDInput) (webhook.View, error) {
			return w.endpoint(c, in.ID)
		}),
		declare(w, op.Meta{Name: "webhooks.create"}, func(c op.Caller, in webhook.CreateInput) (webhook.WithSecret, error) {
			if in.URL == "" {
				return webhook.WithSecret{}, domain.Validation("INVALID_URL", "url is required").WithField("url")
			}
			if len(in.EventTypes) == 0 {
				return webhook.WithSecret{}, domain.Validation("INVALID_EVENT_TYPES", "pick at least one event type").WithField("event_types")
			}
			e := withState(webhook.View{ID: uuid.New(), URL: in.URL, Description: in.Description, EventTypes: in.EventTypes, EmbedID: in.EmbedID,
				Headers: in.Headers, Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: now, UpdatedAt: now,
				MaxInFlight: orDefault(in.MaxInFlight, 1), TimeoutSeconds: orDefault(in.TimeoutSeconds, 10), MaxAttempts: orDefault(in.MaxAttempts, 18)})
			w.endpoints[e.ID], w.owners[e.ID] = e, c.OwnerID
			return webhook.WithSecret{View: e, Secret: "whsec_" + uuid.NewString()}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.update"}, func(c op.Caller, in webhook.UpdateInput) (webhook.View, error) {
			e, err := w.endpoint(c, in.ID)
			if err != nil {
				return e, err
			}
			if in.URL != nil {
				e.URL = *in.URL
			}
			if in.Description != nil {
				e.Description = *in.Description
			}
			if in.EventTypes != nil {
				e.EventTypes = in.EventTypes
			}
			e.EmbedID = in.EmbedID
			if in.Headers != nil {
				e.Headers = in.Headers
			}
			for _, f := range []struct {
				in  *int
				out *int
			}{{in.MaxInFlight, &e.MaxInFlight}, {in.TimeoutSeconds, &e.TimeoutSeconds}, {in.MaxAttempts, &e.MaxAttempts}} {
				if f.in != nil {
					*f.out = *f.in
				}
			}
			if in.Enabled != nil {
				e.Enabled = *in.Enabled
				e.DisabledReason, e.FailingSince = nil, nil
				if !e.Enabled {
					e.DisabledReason = ptr("disabled by the owner")
				}
			}
			e = withState(e)
			w.endpoints[e.ID] = e
			return e, nil
		}),
		declare(w, op.Meta{Name: "webhooks.delete"}, func(c op.Caller, in webhook.IDInput) (op.Empty, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return op.Empty{}, err
			}
			delete(w.endpoints, in.ID)
			return op.Empty{}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.rotate_secret"}, func(c op.Caller, in webhook.IDInput) (webhook.SecretOutput, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return webhook.SecretOutput{}, err
			}
			return webhook.SecretOutput{Secret: "whsec_rotated_" + uuid.NewString()}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.send_test"}, func(c op.Caller, in webhook.IDInput) (webhook.TestOutput, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return webhook.TestOutput{}, err
			}
			w.nextJob++
			d := webhook.Delivery{JobID: w.nextJob, EventID: uuid.New(), EventType: "webhook.test", State: "completed", Attempt: 1, MaxAttempts: 25,
				AttemptedAt: &now, CreatedAt: now, TaskURL: "/admin/tasks?job=" + itoa(w.nextJob), StatusCode: ptr(204)}
			w.deliveries[in.ID] = append([]webhook.Delivery{d}, w.deliveries[in.ID]...)
			return webhook.TestOutput{EventID: d.EventID, JobID: d.JobID}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.deliveries"}, func(c op.Caller, in webhook.DeliveriesInput) (webhook.DeliveryPage, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return webhook.DeliveryPage{}, err
			}
			p := op.NewPage(w.deliveries[in.ID], 50, func(d webhook.Delivery) string { return itoa(d.JobID) })
			return webhook.DeliveryPage{Data: p.Data, NextCursor: p.NextCursor}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.delivery"}, func(c op.Caller, in webhook.DeliveryIDInput) (webhook.DeliveryDetail, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return webhook.DeliveryDetail{}, err
			}
			for _, d := range w.deliveries[in.ID] {
				if d.JobID == in.JobID {
					return webhook.DeliveryDetail{Delivery: d, Attempts: []webhook.Attempt{}}, nil
				}
			}
			return webhook.DeliveryDetail{}, domain.ErrNotFound
		}),
		declare(w, op.Meta{Name: "webhooks.redeliver"}, func(c op.Caller, in webhook.IDInput) (webhook.RedeliverOutput, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return webhook.RedeliverOutput{}, err
			}
			return webhook.RedeliverOutput{Count: 3, States: webhook.RedeliverStates, ByState: map[string]int{"discarded": 2, "cancelled": 1}}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.recover"}, func(c op.Caller, in webhook.RecoverInput) (webhook.RecoverOutput, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return webhook.RecoverOutput{}, err
			}
			return webhook.RecoverOutput{}, nil
		}),
		declare(w, op.Meta{Name: "events.poisoned"}, func(_ op.Caller, _ eventop.PoisonedInput) (op.Page[eventop.Event], error) {
			return op.NewPage(append([]eventop.Event(nil), w.poisoned...), 50, func(e eventop.Event) string { return e.ID.String() }), nil
		}),
		declare(w, op.Meta{Name: "events.release"}, func(_ op.Caller, in eventop.IDInput) (eventop.Event, error) {
			for i, e := range w.poisoned {
				if e.ID == in.ID {
					w.poisoned = append(w.poisoned[:i], w.poisoned[i+1:]...)
					return e, nil
				}
			}
			return eventop.Event{}, domain.ErrNotFound
		}),
		declare(w, op.Meta{Name: "inbound_sources.list"}, func(c op.Caller, _ op.PageInput) (op.Page[inbound.SourceView], error) {
			var rows []inbound.SourceView
			for id, s := range w.sources {
				if w.owners[id] == c.OwnerID {
					rows = append(rows, s)
				}
			}
			return op.NewPage(rows, 50, func(s inbound.SourceView) string { return s.ID.String() }), nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.create"}, func(c op.Caller, in inbound.CreateSourceInput) (inbound.CreatedSource, error) {
			if in.Name == "" {
				return inbound.CreatedSource{}, domain.Validation("INBOUND_NAME_REQUIRED", "name is required").WithField("name")
			}
			s := inbound.SourceView{ID: uuid.New(), Name: in.Name, Verifier: in.Verifier, Options: in.Options, Enabled: in.Enabled == nil || *in.Enabled,
				BodyLimitBytes: 1 << 20, ToleranceSeconds: 300, SecretRotatedAt: &now, CreatedAt: now, UpdatedAt: now}
			s.ReceiveURL = "/hooks/" + s.ID.String()
			w.sources[s.ID], w.owners[s.ID] = s, c.OwnerID
			out := inbound.CreatedSource{SourceView: s}
			if in.Verifier == "standard-webhooks" {
				out.Secret = "whsec_inbound_" + uuid.NewString()
			}
			// One dead letter, so the source page has one to replay.
			w.messages[s.ID] = []inbound.MessageView{{ID: uuid.New(), SourceID: s.ID, MessageID: "msg_dead", EventType: "ping", State: inbound.StateDead, Attempts: 5,
				LastError: ptr("handler failed"), ReceivedAt: now, DeadAt: &now}}
			return out, nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.get"}, func(c op.Caller, in inbound.SourceIDInput) (inbound.SourceView, error) {
			return w.source(c, in.ID)
		}),
		declare(w, op.Meta{Name: "inbound_sources.update"}, func(c op.Caller, in inbound.UpdateSourceInput) (inbound.SourceView, error) {
			s, err := w.source(c, in.ID)
			if err != nil {
				return s, err
			}
			if in.Enabled != nil {
				s.Enabled = *in.Enabled
			}
			w.sources[s.ID] = s
			return s, nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.delete"}, func(c op.Caller, in inbound.SourceIDInput) (op.Empty, error) {
			if _, err := w.source(c, in.ID); err != nil {
				return op.Empty{}, err
			}
			delete(w.sources, in.ID)
			delete(w.messages, in.ID)
			return op.Empty{}, nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.rotate_secret"}, func(c op.Caller, in inbound.RotateSecretInput) (inbound.RotatedSecret, error) {
			if _, err := w.source(c, in.ID); err != nil {
				return inbound.RotatedSecret{}, err
			}
			return inbound.RotatedSecret{Secret: ptr("whsec_inbound_rotated"), SecretRotatedAt: now, PreviousSecretExpiresAt: now.Add(inbound.SecretGrace)}, nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.messages"}, func(c op.Caller, in inbound.ListMessagesInput) (op.Page[inbound.MessageView], error) {
			if _, err := w.source(c, in.ID); err != nil {
				return op.Page[inbound.MessageView]{}, err
			}
			return op.NewPage(append([]inbound.MessageView(nil), w.messages[in.ID]...), 50, func(m inbound.MessageView) string { return m.ID.String() }), nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.message"}, func(c op.Caller, in inbound.MessageInput) (inbound.MessageDetail, error) {
			if _, err := w.source(c, in.ID); err != nil {
				return inbound.MessageDetail{}, err
			}
			for _, m := range w.messages[in.ID] {
				if m.ID == in.MessageID {
					return inbound.MessageDetail{MessageView: m, Headers: map[string][]string{}, Body: "{}", BodyEncoding: "utf-8"}, nil
				}
			}
			return inbound.MessageDetail{}, domain.ErrNotFound
		}),
		declare(w, op.Meta{Name: "inbound_sources.dead_letters"}, func(c op.Caller, in inbound.ListDeadLettersInput) (op.Page[inbound.MessageView], error) {
			if _, err := w.source(c, in.ID); err != nil {
				return op.Page[inbound.MessageView]{}, err
			}
			var dead []inbound.MessageView
			for _, m := range w.messages[in.ID] {
				if m.State == inbound.StateDead {
					dead = append(dead, m)
				}
			}
			return op.NewPage(dead, 50, func(m inbound.MessageView) string { return m.ID.String() }), nil
		}),
		declare(w, op.Meta{Name: "inbound_sources.replay_dead_letter"}, func(c op.Caller, in inbound.ReplayDeadLetterInput) (inbound.MessageView, error) {
			if _, err := w.source(c, in.ID); err != nil {
				return inbound.MessageView{}, err
			}
			for i, m := range w.messages[in.ID] {
				if m.ID == in.MessageID && m.State == inbound.StateDead {
					m.State, m.DeadAt, m.Replays = inbound.StateDone, nil, m.Replays+1
					w.messages[in.ID][i] = m
					return m, nil
				}
			}
			return inbound.MessageView{}, domain.Conflict("NOT_DEAD", "the message is not a dead letter")
		}),
		declare(w, op.Meta{Name: "inbound_sources.replay_dead_letters"}, func(c op.Caller, in inbound.ReplayDeadLettersInput) (inbound.ReplayCount, error) {
			if _, err := w.source(c, in.ID); err != nil {
				return inbound.ReplayCount{}, err
			}
			n := 0
			for i, m := range w.messages[in.ID] {
				if m.State == inbound.StateDead {
					m.State, m.DeadAt, m.Replays = inbound.StateDone, nil, m.Replays+1
					w.messages[in.ID][i] = m
					n++
				}
			}
			return inbound.ReplayCount{Count: n}, nil
		}),
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
