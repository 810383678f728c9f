package inbound

import (
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Source limits and defaults.
const (
	// DefaultBodyLimit is a source's body limit when none is given (1 MiB).
	DefaultBodyLimit int64 = 1 << 20
	// MaxBodyLimit caps a source's body limit (10 MiB): the gateway holds a
	// whole body in memory to verify it.
	MaxBodyLimit int64 = 10 << 20
	// DefaultToleranceSeconds is a source's timestamp tolerance when none is
	// given (5 minutes, as the Standard Webhooks and Stripe libraries).
	DefaultToleranceSeconds = 300
	// MaxToleranceSeconds caps the tolerance (the verifier's cap).
	MaxToleranceSeconds = 3600
	// MaxNameLen bounds a source's name.
	MaxNameLen = 200
	// UntimedReplayWindow is how long the replay store keeps the id of a
	// message whose kind signs no timestamp (github). The inbox's own
	// uniqueness keeps refusing it afterwards; the store is the fast path.
	UntimedReplayWindow = 24 * time.Hour
	// SecretGrace is how long the secret replaced by a rotation keeps
	// verifying, as for webhook endpoints.
	SecretGrace = 24 * time.Hour
	// replayMargin keeps a replay key a little past the tolerance window, so
	// clock skew between replicas cannot open a gap.
	replayMargin = time.Minute
)

// Source is an inbound webhook source of one owner: where one outside
// service sends its webhooks, and how they are verified.
type Source struct {
	ID      uuid.UUID
	OwnerID uuid.UUID
	Name    string
	// Verifier is the provider kind (verifier.KindStandardWebhooks, …).
	Verifier string
	// Options are the kind's normalized options (verifier.Factory.ValidateOptions).
	Options json.RawMessage
	// SealedSecret is the secret sealed by SealFunc with the source id as
	// associated data. Only the gateway unseals it, through UnsealFunc.
	SealedSecret []byte
	Enabled      bool
	// RecordEvents makes each accepted message record
	// inbound.message.received in the transaction that admits it.
	RecordEvents bool
	// BodyLimit is the largest accepted body in bytes.
	BodyLimit int64
	// ToleranceSeconds is the timestamp window both ways. For kinds that sign
	// a timestamp it is also the options' tolerance_seconds.
	ToleranceSeconds int
	// SecretRotatedAt is when the secret was last rotated; zero when never.
	SecretRotatedAt time.Time
	// PreviousSealedSecret is the secret before the last rotation, sealed
	// like SealedSecret; it verifies too until PreviousSecretExpiresAt.
	PreviousSealedSecret    []byte
	PreviousSecretExpiresAt time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// RotateSecret makes sealed the source's secret at now. The secret it
// replaces keeps verifying for SecretGrace; a previous secret still in its
// grace is dropped at once.
func (s *Source) RotateSecret(sealed []byte, now time.Time) {
	s.PreviousSealedSecret, s.PreviousSecretExpiresAt = s.SealedSecret, now.Add(SecretGrace)
	s.SealedSecret = sealed
	s.SecretRotatedAt, s.UpdatedAt = now, now
}

// ReceivePath returns the path senders post to: /hooks/{id}.
func (s Source) ReceivePath() string { return "/hooks/" + s.ID.String() }

// State is the state of an inbox message, mirroring its River job for the
// admin views.
type State string

// The states of an inbox message.
const (
	// StateReceived: accepted and waiting for its (first or next) attempt.
	StateReceived State = "received"
	// StateProcessing: a worker is running its handlers.
	StateProcessing State = "processing"
	// StateDone: every handler succeeded.
	StateDone State = "done"
	// StateDead: a dead letter — attempts exhausted or a permanent failure.
	StateDead State = "dead"
)

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	switch s {
	case StateReceived, StateProcessing, StateDone, StateDead:
		return true
	}
	return false
}

// Digest is the SHA-256 of a raw body, the inbox's idempotency digest.
type Digest [sha256.Size]byte

// DigestOf returns the SHA-256 of body.
func DigestOf(body []byte) Digest { return sha256.Sum256(body) }

// Envelope is a verified message as the gateway writes it into the inbox.
type Envelope struct {
	// ID is the inbox row's id (not the sender's message id).
	ID       uuid.UUID
	OwnerID  uuid.UUID
	SourceID uuid.UUID
	// MessageID is the sender's id, unique per source.
	MessageID string
	// MessageIDSigned reports whether the signature covers MessageID; when it
	// does not, the body digest is unique per source too.
	MessageIDSigned bool
	// StableID: MessageID is the provider's own id of the event
	// (verifier.Result.StableID), so a known id with another body is a
	// duplicate; otherwise it is a conflict.
	StableID  bool
	EventType string
	Digest    Digest
	Body      []byte
	// Headers are the request headers, minus credentials and hop-by-hop ones.
	Headers domain.Header
	// SignedAt is the signed send time, zero for kinds without one.
	SignedAt   time.Time
	ReceivedAt time.Time
}

// Record is an inbox row: the envelope and its processing state.
type Record struct {
	Envelope
	// SourceKind is the verifier kind of the source (for routing).
	SourceKind    string
	State         State
	Attempts      int
	LastError     string
	LastAttemptAt time.Time
	NextAttemptAt time.Time
	DoneAt        time.Time
	DeadAt        time.Time
	// Replays counts how often the message was replayed from the dead letters.
	Replays int
	// JobID is the River job that last processed (or will process) it; 0 when
	// not known yet.
	JobID int64
	// ActivationPending reports, for a message an attempt began on, whether
	// its source had a supplier connection not activated yet.
	ActivationPending bool
}

// Message is what a Handler sees of an inbox message.
type Message struct {
	// ID is the inbox row's id.
	ID       uuid.UUID
	OwnerID  uuid.UUID
	SourceID uuid.UUID
	// SourceKind is the verifier kind the message came through.
	SourceKind string
	// MessageID is the sender's id.
	MessageID string
	// EventType is the provider's event type, empty when the kind carries none.
	EventType string
	// Body is the exact raw body that was verified.
	Body    []byte
	Headers domain.Header
	// SignedAt is the signed send time, zero for kinds without one.
	SignedAt   time.Time
	ReceivedAt time.Time
	// Attempt counts this run, starting at 1.
	Attempt int
	// ActivationPending reports whether the source had a supplier connection
	// not activated yet when this attempt began.
	ActivationPending bool
}

func (r Record) message() Message {
	return Message{
		ID:         r.ID,
		OwnerID:    r.OwnerID,
		SourceID:   r.SourceID,
		SourceKind: r.SourceKind,
		MessageID:  r.MessageID,
		EventType:  r.EventType,
		Body:       r.Body,
		Headers:    r.Headers,
		SignedAt:   r.SignedAt,
		ReceivedAt: r.ReceivedAt,
		Attempt:    r.Attempts,

		ActivationPending: r.ActivationPending,
	}
}

// ReplayKey identifies a message in the replay store.
type ReplayKey struct {
	SourceID  uuid.UUID
	MessageID string
}

// ReplayOutcome is what registering a replay key found.
type ReplayOutcome int

const (
	// ReplayNew: the key was registered now (or took over an expired one).
	ReplayNew ReplayOutcome = iota
	// ReplayDuplicate: the key is live with the same digest.
	ReplayDuplicate
	// ReplayConflict: the key is live with another digest.
	ReplayConflict
)

// InsertOutcome is what an idempotent inbox insert did.
type InsertOutcome struct {
	// Inserted is true when the envelope became a new row.
	Inserted bool
	// ExistingID and ExistingDigest describe the row that was already there
	// (same source and message id, or same unsigned body) when not inserted.
	ExistingID     uuid.UUID
	ExistingDigest Digest
	// SameMessageID is true when the existing row has the same message id (as
	// opposed to the same unsigned body under another id).
	SameMessageID bool
}

// Revived is a dead letter made pending again, with the attempts it has
// left for its new job.
type Revived struct {
	ID          uuid.UUID
	MaxAttempts int
}
