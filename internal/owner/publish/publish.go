// Package publish is the owner domain's event publishing: the owner's other
// services (a booking system, a microsite builder, …) record events of the
// externally produced types through the events.publish op, and those events
// flow through the relay, the scope checks and the webhooks like every event
// this server records itself.
//
// Only types whose producer is external may be published, so no service can
// forge an event this server produces (owner.login, ip_ban.added). Data is
// thin and closed: a JSON object of at most MaxDataBytes that matches the
// type's declared schema. An idempotency key returns the first event published
// under it for as long as that event is kept, to the same request only.
package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Limits of one published event and of a batch.
const (
	// MaxDataBytes caps an event's data as sent: events are thin (ids and
	// flags), a few KiB at most.
	MaxDataBytes = 4096
	// MaxSubjectLen caps the subject URI in bytes.
	MaxSubjectLen = 512
	// MaxIdempotencyKeyLen caps an idempotency key in bytes.
	MaxIdempotencyKeyLen = 255
	// MaxBatch is the most events one batch may publish.
	MaxBatch = 100
)

// The error codes of refused publishes; nothing is recorded for any of them.
const (
	CodeUnknownType        = "UNKNOWN_EVENT_TYPE"
	CodeNotPublishable     = "EVENT_TYPE_NOT_PUBLISHABLE"
	CodeInvalidSubject     = "INVALID_SUBJECT"
	CodeDataNotObject      = "DATA_NOT_OBJECT"
	CodeDataTooLarge       = "DATA_TOO_LARGE"
	CodeDataSchema         = "DATA_SCHEMA_MISMATCH"
	CodeInvalidIdempotency = "INVALID_IDEMPOTENCY_KEY"
	// CodeKeyReused refuses a key used before for another request (409).
	CodeKeyReused     = "IDEMPOTENCY_KEY_REUSED"
	CodeEmptyBatch    = "EMPTY_BATCH"
	CodeBatchTooLarge = "BATCH_TOO_LARGE"
	CodeRateLimited   = "RATE_LIMITED"
)

// UnitOfWork runs fn in one transaction, committed when fn returns nil.
type UnitOfWork interface {
	Do(ctx context.Context, fn func(tx Tx) error) error
}

// Tx hands out the Recorder and the idempotency keys bound to one
// transaction.
type Tx interface {
	Recorder() domain.Recorder
	Keys() KeyStore
}

// KeyStore remembers which event was published under an owner's
// idempotency key, and the fingerprint of the request that published it,
// for as long as that event is kept: when the event is pruned its key goes
// with it.
type KeyStore interface {
	// Find returns the event first published under key by ownerID and its
	// request's fingerprint (nil when the key predates fingerprints).
	Find(ctx context.Context, ownerID uuid.UUID, key string) (Claimed, bool, error)
	// Claim stores key for the event and its request's fingerprint; false
	// when the key is taken (a concurrent publish committed it first), and
	// then nothing is stored.
	Claim(ctx context.Context, ownerID uuid.UUID, key string, c Claimed) (bool, error)
}

// Claimed is what a key holds: the event first published under it and the
// fingerprint of that request (Fingerprint).
type Claimed struct {
	EventID     uuid.UUID
	Fingerprint []byte
}

// Limiter grants a caller's key events and bytes per unit of time. Allow
// either takes both or takes nothing and says when to retry.
type Limiter interface {
	Allow(key string, events, bytes int) (retryAfter time.Duration, ok bool)
}

// Input is one event to publish.
type Input struct {
	Type    string          `json:"type" doc:"an event type whose producer is external (see webhooks.event_types)"`
	Subject string          `json:"subject" doc:"what the event is about, an absolute URI such as booking://b_41"`
	Data    json.RawMessage `json:"data" doc:"a JSON object of at most 4096 bytes matching the type's data_schema"`
	// IdempotencyKey makes a retry safe: the same key with the same
	// request within the event retention returns the first event; with
	// another request it is refused (CodeKeyReused).
	IdempotencyKey string `json:"idempotency_key,omitempty" doc:"the same key with the same type, subject and data within the event retention returns the first event (200); with another, 409 IDEMPOTENCY_KEY_REUSED; 1-255 printable ASCII characters"`
}

// BatchInput is up to MaxBatch events published together.
type BatchInput struct {
	Events []Input `json:"events" doc:"1 to 100 events, recorded in one transaction: all or none"`
}

// Output names the recorded event.
type Output struct {
	ID uuid.UUID `json:"id"`
	// Duplicate is true when the idempotency key had been used already and
	// ID is the event first published under it.
	Duplicate bool `json:"duplicate"`
}

// Replayed is true for a replay of an idempotency key (op.Replayer).
func (o Output) Replayed() bool { return o.Duplicate }

// BatchOutput lists the batch's events in input order.
type BatchOutput struct {
	Data []Output `json:"data"`
}

// Replayed is true when no event of the batch is new (op.Replayer).
func (o BatchOutput) Replayed() bool {
	for _, e := range o.Data {
		if !e.Duplicate {
			return false
		}
	}
	return true
}

// Service publishes events for the owner's services.
type Service struct {
	uow     UnitOfWork
	limiter Limiter
}

// NewService returns a Service; limiter may be nil (no rate limit).
func NewService(uow UnitOfWork, limiter Limiter) *Service {
	return &Service{uow: uow, limiter: limiter}
}

// Publish records one event for the caller's owner. A refused event (bad
// input, rate limit) records nothing.
func (s *Service) Publish(ctx context.Context, c op.Caller, in Input) (Output, error) {
	ev, err := check(in)
	if err != nil {
		return Output{}, err
	}
	if err := s.allow(c, []checked{ev}); err != nil {
		return Output{}, err
	}
	out, err := s.record(ctx, c.OwnerID, []checked{ev}, false)
	if err != nil {
		return Output{}, fmt.Errorf("publish %s: %w", in.Type, err)
	}
	return out[0], nil
}

// PublishBatch records up to MaxBatch events in one transaction: every
// event is recorded or none is. A refusal names every refused item.
func (s *Service) PublishBatch(ctx context.Context, c op.Caller, in BatchInput) (BatchOutput, error) {
	switch {
	case len(in.Events) == 0:
		return BatchOutput{}, domain.Validation(CodeEmptyBatch, "events needs at least one event").WithField("events")
	case len(in.Events) > MaxBatch:
		return BatchOutput{}, domain.TooLarge(CodeBatchTooLarge, fmt.Sprintf("a batch holds at most %d events, this one %d", MaxBatch, len(in.Events))).WithField("events")
	}
	evs := make([]checked, len(in.Events))
	var first *domain.Error
	var problems []string
	for i, item := range in.Events {
		ev, err := check(item)
		if err != nil {
			de := domain.AsError(err)
			at := fmt.Sprintf("events[%d]", i)
			if de.Field != "" {
				at += "." + de.Field
			}
			problems = append(problems, fmt.Sprintf("%s: %s %s", at, de.Code, de.Message))
			if first == nil {
				first = de.WithField(at)
			}
			continue
		}
		evs[i] = ev
	}
	if first != nil {
		e := *first
		e.Message = fmt.Sprintf("%d of %d events refused, nothing recorded: %s", len(problems), len(in.Events), strings.Join(problems, "; "))
		return BatchOutput{}, &e
	}
	if err := s.allow(c, evs); err != nil {
		return BatchOutput{}, err
	}
	out, err := s.record(ctx, c.OwnerID, evs, true)
	if err != nil {
		return BatchOutput{}, fmt.Errorf("publish batch of %d: %w", len(evs), err)
	}
	return BatchOutput{Data: out}, nil
}

// errKeyRace aborts a transaction whose idempotency key a concurrent
// publish committed first; the publish is tried again and finds it.
var errKeyRace = errors.New("idempotency key claimed concurrently")

func (s *Service) record(ctx context.Context, ownerID uuid.UUID, evs []checked, batch bool) ([]Output, error) {
	for attempt := 0; ; attempt++ {
		out, err := s.recordOnce(ctx, ownerID, evs, batch)
		if errors.Is(err, errKeyRace) && attempt < 3 {
			continue
		}
		return out, err
	}
}

func (s *Service) recordOnce(ctx context.Context, ownerID uuid.UUID, evs []checked, batch bool) ([]Output, error) {
	out := make([]Output, len(evs))
	err := s.uow.Do(ctx, func(tx Tx) error {
		inBatch := map[string]Claimed{}
		for i, ev := range evs {
			fp := ev.fingerprint()
			if ev.key != "" {
				first, found := inBatch[ev.key]
				if !found {
					var err error
					if first, found, err = tx.Keys().Find(ctx, ownerID, ev.key); err != nil {
						return err
					}
				}
				if found {
					if first.Fingerprint != nil && !bytes.Equal(first.Fingerprint, fp) {
						return keyReused(ev.key, first.EventID, i, batch)
					}
					out[i] = Output{ID: first.EventID, Duplicate: true}
					inBatch[ev.key] = first
					continue
				}
			}
			id, err := tx.Recorder().Record(ctx, ownerID, ev.eventType, ev.subject, ev.data)
			if err != nil {
				return err
			}
			if ev.key != "" {
				c := Claimed{EventID: id, Fingerprint: fp}
				ok, err := tx.Keys().Claim(ctx, ownerID, ev.key, c)
				if err != nil {
					return err
				}
				if !ok {
					return errKeyRace
				}
				inBatch[ev.key] = c
			}
			out[i] = Output{ID: id}
		}
		return nil
	})
	return out, err
}

// keyReused refuses the request (item i of a batch) whose key named
// another request's event.
func keyReused(key string, first uuid.UUID, i int, batch bool) error {
	field := "idempotency_key"
	if batch {
		field = fmt.Sprintf("events[%d].idempotency_key", i)
	}
	return domain.Conflict(CodeKeyReused, fmt.Sprintf("idempotency_key %q was used for event %s with another type, subject or data; nothing recorded", key, first)).
		WithField(field)
}

func (s *Service) allow(c op.Caller, evs []checked) error {
	if s.limiter == nil {
		return nil
	}
	bytes := 0
	for _, ev := range evs {
		bytes += len(ev.data)
	}
	key := "owner:" + c.OwnerID.String()
	if c.APIKeyID != uuid.Nil {
		key = "api_key:" + c.APIKeyID.String()
	}
	if wait, ok := s.limiter.Allow(key, len(evs), bytes); !ok {
		secs := int(wait.Round(time.Second) / time.Second)
		if secs < 1 {
			secs = 1
		}
		return domain.RateLimited(CodeRateLimited,
			fmt.Sprintf("this key's publishing rate or volume is over its limit; retry in %d s", secs)).WithRetryAfter(time.Duration(secs) * time.Second)
	}
	return nil
}

// checked is an event that passed every check.
type checked struct {
	eventType, subject, key string
	data                    json.RawMessage
}

// fingerprint is the SHA-256 of what the event asks for: its type, its
// subject and its data as a JSON value, so white space and the order of
// object members do not matter (numbers compare by their text).
func (c checked) fingerprint() []byte {
	h := sha256.New()
	for _, part := range []string{c.eventType, c.subject} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(c.data))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil {
		if canon, err := json.Marshal(v); err == nil {
			h.Write(canon)
			return h.Sum(nil)
		}
	}
	// check accepted only a JSON object, so this is unreachable; the raw
	// bytes still fingerprint the request.
	h.Write(c.data)
	return h.Sum(nil)
}

// check validates one event without touching any store.
func check(in Input) (checked, error) {
	et, ok := domain.LookupEventType(in.Type)
	if !ok {
		return checked{}, domain.Validation(CodeUnknownType, fmt.Sprintf("%q is not a declared event type (see GET /api/admin/webhooks/event-types)", in.Type)).WithField("type")
	}
	if !et.Publishable() {
		return checked{}, domain.Forbidden(CodeNotPublishable,
			fmt.Sprintf("%s is produced inside this server (%s: %s); only external types may be published", et.Name, et.Producer.Kind, et.Producer.Name)).WithField("type")
	}
	if err := checkSubject(in.Subject); err != nil {
		return checked{}, err
	}
	if err := checkKey(in.IdempotencyKey); err != nil {
		return checked{}, err
	}
	data := json.RawMessage(strings.TrimSpace(string(in.Data)))
	if len(data) > MaxDataBytes {
		return checked{}, domain.TooLarge(CodeDataTooLarge,
			fmt.Sprintf("data is %d bytes; events are thin (ids and flags), at most %d bytes", len(data), MaxDataBytes)).WithField("data")
	}
	if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
		return checked{}, domain.Validation(CodeDataNotObject, "data must be a JSON object").WithField("data")
	}
	if err := domain.ValidateJSON(et.DataSchema, data); err != nil {
		return checked{}, domain.Unprocessable(CodeDataSchema,
			fmt.Sprintf("data does not match the data_schema of %s: %v", et.Name, err)).WithField("data")
	}
	return checked{eventType: et.Name, subject: in.Subject, key: in.IdempotencyKey, data: data}, nil
}

// checkSubject accepts an absolute URI: a scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), a colon, and no spaces or control
// characters.
func checkSubject(s string) error {
	bad := func(why string) error {
		return domain.Validation(CodeInvalidSubject, "subject must be an absolute URI such as booking://b_41: "+why).WithField("subject")
	}
	switch {
	case s == "":
		return bad("it is empty")
	case len(s) > MaxSubjectLen:
		return bad(fmt.Sprintf("it is longer than %d bytes", MaxSubjectLen))
	case !utf8.ValidString(s):
		return bad("it is not UTF-8")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return bad("it contains a space or a control character")
		}
	}
	if entity.IsRaw(s) {
		return bad("raw:// names the corpus's private notes, which never leave the instance")
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || rest == "" {
		return bad("it has no scheme")
	}
	for i, r := range scheme {
		letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || !((r >= '0' && r <= '9') || r == '+' || r == '-' || r == '.')) {
			return bad("its scheme is malformed")
		}
	}
	return nil
}

func checkKey(k string) error {
	if k == "" {
		return nil
	}
	if len(k) > MaxIdempotencyKeyLen {
		return domain.Validation(CodeInvalidIdempotency, fmt.Sprintf("idempotency_key is longer than %d bytes", MaxIdempotencyKeyLen)).WithField("idempotency_key")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return domain.Validation(CodeInvalidIdempotency, "idempotency_key must be printable ASCII without spaces").WithField("idempotency_key")
		}
	}
	return nil
}
