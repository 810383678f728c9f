package web_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// The fakes below declare ops with the contract's names, routes and JSON
// shapes over an in-memory store, so the UI can be tested as it calls the
// real ones: through op.Set, by JSON.

type fakeEndpoint struct {
	ID             uuid.UUID         `json:"id"`
	URL            string            `json:"url"`
	Description    string            `json:"description"`
	EventTypes     []string          `json:"event_types"`
	EmbedID        *uuid.UUID        `json:"embed_id"`
	Headers        map[string]string `json:"headers"`
	Enabled        bool              `json:"enabled"`
	DisabledReason *string           `json:"disabled_reason"`
	FailingSince   *time.Time        `json:"failing_since"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
	MaxInFlight    int               `json:"max_in_flight"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	MaxAttempts    int               `json:"max_attempts"`
}

// MarshalJSON adds the state the contract derives from the fields.
func (e fakeEndpoint) MarshalJSON() ([]byte, error) {
	type plain fakeEndpoint
	state := "enabled"
	switch {
	case !e.Enabled:
		state = "disabled"
	case e.FailingSince != nil:
		state = "failing"
	}
	return json.Marshal(struct {
		plain
		State string `json:"state"`
	}{plain(e), state})
}

type fakeCreated struct {
	fakeEndpoint
	Secret string `json:"secret"`
}

// MarshalJSON adds the secret to the endpoint's JSON.
func (c fakeCreated) MarshalJSON() ([]byte, error) {
	b, err := c.fakeEndpoint.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["secret"] = c.Secret
	return json.Marshal(m)
}

type fakeDelivery struct {
	JobID       int64      `json:"job_id"`
	EventID     uuid.UUID  `json:"event_id"`
	EventType   string     `json:"event_type"`
	State       string     `json:"state"`
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"max_attempts"`
	LastError   *string    `json:"last_error"`
	AttemptedAt *time.Time `json:"attempted_at"`
	CreatedAt   time.Time  `json:"created_at"`
	TaskURL     string     `json:"task_url"`
	StatusCode  *int       `json:"status_code"`
}

type createEndpointIn struct {
	URL         string            `json:"url"`
	Description string            `json:"description,omitempty"`
	EventTypes  []string          `json:"event_types"`
	EmbedID     *uuid.UUID        `json:"embed_id,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Enabled     *bool             `json:"enabled,omitempty"`
	// The settings default to 1, 10 and 18.
	MaxInFlight    *int `json:"max_in_flight,omitempty"`
	TimeoutSeconds *int `json:"timeout_seconds,omitempty"`
	MaxAttempts    *int `json:"max_attempts,omitempty"`
}

func orDefault(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

type updateEndpointIn struct {
	ID             uuid.UUID          `json:"id" path:"id"`
	Enabled        *bool              `json:"enabled,omitempty"`
	URL            *string            `json:"url,omitempty"`
	Description    *string            `json:"description,omitempty"`
	EventTypes     []string           `json:"event_types,omitempty"`
	EmbedID        *uuid.UUID         `json:"embed_id,omitempty"`
	Headers        *map[string]string `json:"headers,omitempty"`
	MaxInFlight    *int               `json:"max_in_flight,omitempty"`
	TimeoutSeconds *int               `json:"timeout_seconds,omitempty"`
	MaxAttempts    *int               `json:"max_attempts,omitempty"`
}

type idIn struct {
	ID uuid.UUID `json:"id" path:"id"`
}

type deliveriesIn struct {
	ID uuid.UUID `json:"id" path:"id"`
	op.PageInput
}

// world is the fakes' store, one owner's rows per OwnerID.
type world struct {
	mu         sync.Mutex
	endpoints  map[uuid.UUID]fakeEndpoint
	owners     map[uuid.UUID]uuid.UUID
	deliveries map[uuid.UUID][]fakeDelivery
	sources    map[uuid.UUID]inbound.SourceView
	messages   map[uuid.UUID][]inbound.MessageView
	poisoned   []eventop.Event
	nextJob    int64
	// calls counts op calls by name.
	calls map[string]int
}

func newWorld() *world {
	return &world{
		endpoints: map[uuid.UUID]fakeEndpoint{}, owners: map[uuid.UUID]uuid.UUID{},
		deliveries: map[uuid.UUID][]fakeDelivery{}, sources: map[uuid.UUID]inbound.SourceView{},
		messages: map[uuid.UUID][]inbound.MessageView{}, nextJob: 100, calls: map[string]int{},
	}
}

func (w *world) count(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[name]
}

func (w *world) endpoint(c op.Caller, id uuid.UUID) (fakeEndpoint, error) {
	e, ok := w.endpoints[id]
	if !ok || w.owners[id] != c.OwnerID {
		return fakeEndpoint{}, domain.ErrNotFound
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
		declare(w, op.Meta{Name: "webhooks.list"}, func(c op.Caller, _ op.PageInput) (op.Page[fakeEndpoint], error) {
			var rows []fakeEndpoint
			for id, e := range w.endpoints {
				if w.owners[id] == c.OwnerID {
					rows = append(rows, e)
				}
			}
			return op.NewPage(rows, 50, func(e fakeEndpoint) string { return e.ID.String() }), nil
		}),
		declare(w, op.Meta{Name: "webhooks.get"}, func(c op.Caller, in idIn) (fakeEndpoint, error) {
			return w.endpoint(c, in.ID)
		}),
		declare(w, op.Meta{Name: "webhooks.create"}, func(c op.Caller, in createEndpointIn) (fakeCreated, error) {
			if in.URL == "" {
				return fakeCreated{}, domain.Validation("INVALID_URL", "url is required").WithField("url")
			}
			if len(in.EventTypes) == 0 {
				return fakeCreated{}, domain.Validation("INVALID_EVENT_TYPES", "pick at least one event type").WithField("event_types")
			}
			e := fakeEndpoint{ID: uuid.New(), URL: in.URL, Description: in.Description, EventTypes: in.EventTypes, EmbedID: in.EmbedID,
				Headers: in.Headers, Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: now, UpdatedAt: now,
				MaxInFlight: orDefault(in.MaxInFlight, 1), TimeoutSeconds: orDefault(in.TimeoutSeconds, 10), MaxAttempts: orDefault(in.MaxAttempts, 18)}
			w.endpoints[e.ID], w.owners[e.ID] = e, c.OwnerID
			return fakeCreated{fakeEndpoint: e, Secret: "whsec_" + uuid.NewString()}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.update"}, func(c op.Caller, in updateEndpointIn) (fakeEndpoint, error) {
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
				e.Headers = *in.Headers
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
			w.endpoints[e.ID] = e
			return e, nil
		}),
		declare(w, op.Meta{Name: "webhooks.delete"}, func(c op.Caller, in idIn) (op.Empty, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return op.Empty{}, err
			}
			delete(w.endpoints, in.ID)
			return op.Empty{}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.rotate_secret"}, func(c op.Caller, in idIn) (map[string]string, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return nil, err
			}
			return map[string]string{"secret": "whsec_rotated_" + uuid.NewString()}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.send_test"}, func(c op.Caller, in idIn) (map[string]any, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return nil, err
			}
			w.nextJob++
			d := fakeDelivery{JobID: w.nextJob, EventID: uuid.New(), EventType: "webhook.test", State: "completed", Attempt: 1, MaxAttempts: 25,
				AttemptedAt: &now, CreatedAt: now, TaskURL: "/admin/tasks?job=" + itoa(w.nextJob), StatusCode: ptr(204)}
			w.deliveries[in.ID] = append([]fakeDelivery{d}, w.deliveries[in.ID]...)
			return map[string]any{"event_id": d.EventID, "job_id": d.JobID}, nil
		}),
		declare(w, op.Meta{Name: "webhooks.deliveries"}, func(c op.Caller, in deliveriesIn) (op.Page[fakeDelivery], error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return op.Page[fakeDelivery]{}, err
			}
			return op.NewPage(w.deliveries[in.ID], 50, func(d fakeDelivery) string { return itoa(d.JobID) }), nil
		}),
		declare(w, op.Meta{Name: "webhooks.redeliver"}, func(c op.Caller, in idIn) (map[string]any, error) {
			if _, err := w.endpoint(c, in.ID); err != nil {
				return nil, err
			}
			return map[string]any{"count": 3, "by_state": map[string]int{"discarded": 2, "cancelled": 1}}, nil
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
