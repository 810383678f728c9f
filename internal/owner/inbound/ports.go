package inbound

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// SealFunc seals a source's secret at rest; associatedData is the source id's
// bytes, so a sealed value copied onto another row does not open.
// cmd/server provides it from the instance's cryptobox.
type SealFunc func(plaintext, associatedData []byte) ([]byte, error)

// UnsealFunc opens a value sealed by SealFunc. Only cmd/server/unseal.go
// builds one; the gateway is its only caller.
type UnsealFunc func(sealed, associatedData []byte) ([]byte, error)

// UnitOfWork runs fn in one transaction: everything fn does through tx is
// committed together when fn returns nil, and rolled back otherwise.
type UnitOfWork interface {
	Do(ctx context.Context, fn func(tx Tx) error) error
}

// Tx hands out the stores bound to one transaction.
type Tx interface {
	Sources() SourceStore
	Replays() ReplayStore
	Inbox() InboxStore
	Jobs() JobQueue
}

// SourceLookup reads a source by id alone, for the gateway (the sender is
// not an owner). It returns an error matching domain.ErrNotFound when there
// is none.
type SourceLookup interface {
	Lookup(ctx context.Context, id uuid.UUID) (Source, error)
}

// PageQuery asks for one page: Limit+1 rows after the cursor, newest first.
type PageQuery struct {
	Limit int
	After *Cursor
}

// SourceStore keeps sources. Every read and write is scoped by owner; a row
// of another owner is domain.ErrNotFound.
type SourceStore interface {
	Insert(ctx context.Context, s Source) error
	// Get returns the source.
	Get(ctx context.Context, ownerID, id uuid.UUID) (Source, error)
	// Lock locks the source until the transaction ends; not found when
	// ownerID has no such source.
	Lock(ctx context.Context, ownerID, id uuid.UUID) error
	// List returns sources newest first (created_at, id).
	List(ctx context.Context, ownerID uuid.UUID, q PageQuery) ([]Source, error)
	// Update reads the source locked until the transaction ends, hands it to
	// fn and, when fn returns nil, writes what fn leaves of its name,
	// options, secrets, enabled flag, limits and times (never its id, owner,
	// verifier or creation time). fn's error is returned as is and nothing
	// is written; fn is not called for a source ownerID does not have (not
	// found).
	Update(ctx context.Context, ownerID, id uuid.UUID, fn func(s *Source) error) error
	// DropExpiredPreviousSecrets forgets the previous secrets whose grace
	// ended before now and returns how many.
	DropExpiredPreviousSecrets(ctx context.Context, now time.Time) (int64, error)
	// Delete removes the source and its inbox. It returns an error matching
	// ErrSourceInUse when a supplier connection still uses it.
	Delete(ctx context.Context, ownerID, id uuid.UUID) error
}

// ReplayStore remembers (source, message id) with the payload digest until an
// expiry.
type ReplayStore interface {
	// Register atomically registers key with digest until expiresAt, taking
	// over a key that expired before now. Concurrent registrations of one key
	// see exactly one ReplayNew.
	Register(ctx context.Context, key ReplayKey, digest Digest, now, expiresAt time.Time) (ReplayOutcome, error)
	// PurgeExpired deletes up to limit keys that expired before now and
	// returns how many it deleted.
	PurgeExpired(ctx context.Context, now time.Time, limit int) (int64, error)
}

// InboxStates are the processing state changes of inbox messages. Each is
// one atomic statement, so the processor runs them without a transaction of
// its own (three round trips fewer per change).
type InboxStates interface {
	// Begin marks a received (or interrupted processing) message processing,
	// counts the attempt and records the job; ok is false when the message is
	// gone, done or dead, so a stale or repeated job does nothing.
	Begin(ctx context.Context, id uuid.UUID, jobID int64, now time.Time) (r Record, ok bool, err error)
	// MarkDone records success.
	MarkDone(ctx context.Context, id uuid.UUID, now time.Time) error
	// MarkRetry records a failure to be retried at next.
	MarkRetry(ctx context.Context, id uuid.UUID, lastError string, now, next time.Time) error
	// MarkDead records a failure that made the message a dead letter.
	MarkDead(ctx context.Context, id uuid.UUID, lastError string, now time.Time) error
	// Abandon returns a processing message to received and takes back the
	// attempt Begin counted: the run was cut short, not failed.
	Abandon(ctx context.Context, id uuid.UUID) error
}

// InboxStore is the durable inbox; River holds the leases, so the store only
// mirrors state.
type InboxStore interface {
	InboxStates
	// Insert adds the envelope unless a row with the same source and message
	// id exists, or, when the id is not signed, one with the same source and
	// body digest. It never fails on such a duplicate.
	Insert(ctx context.Context, e Envelope) (InsertOutcome, error)
	// Get returns one of the owner's messages.
	Get(ctx context.Context, ownerID, id uuid.UUID) (Record, error)
	// List returns a source's messages newest first (received_at, id), only
	// those in state when it is not empty. Bodies are left out.
	List(ctx context.Context, ownerID, sourceID uuid.UUID, state State, q PageQuery) ([]Record, error)
	// Revive makes dead letters of the source received again — the one with
	// id, or all when id is uuid.Nil — resetting their attempts when asked,
	// and returns them with the attempts each has left (at least one) out of
	// maxAttempts.
	Revive(ctx context.Context, ownerID, sourceID, id uuid.UUID, resetAttempts bool, maxAttempts int, now time.Time) ([]Revived, error)
	// PurgeDone deletes up to limit messages processed (done) before
	// before and returns how many it deleted. Dead letters and messages
	// not yet processed stay, however old.
	PurgeDone(ctx context.Context, before time.Time, limit int) (int64, error)
}

// JobQueue enqueues processing jobs in the transaction.
type JobQueue interface {
	// EnqueueProcess inserts one processing job per message with at most
	// maxAttempts attempts each.
	EnqueueProcess(ctx context.Context, jobs ...ProcessJob) error
}

// ProcessJob asks for one message to be processed.
type ProcessJob struct {
	MessageID   uuid.UUID
	MaxAttempts int
}

// Admission is one verified message the gateway asks the inbox to take.
type Admission struct {
	Envelope Envelope
	// ReplayExpiresAt is how long the replay key (source, message id) lives.
	ReplayExpiresAt time.Time
	// MaxAttempts bounds the processing job's attempts.
	MaxAttempts int
	// Need says when the message needs processing (the zero Need: always).
	// The inbox answers its conditions in the admitting statement: a
	// message that needs none is written done (processed when received,
	// no attempt) and gets no job.
	Need Need
	// RecordEvent is the source's RecordEvents: an accepted message records
	// inbound.message.received.
	RecordEvent bool
}

// Admitted is what the inbox did with one Admission.
type Admitted struct {
	// Status is Accepted (the row was written, with its job when it needs
	// processing) or Duplicate
	// (the message was there before; ID names the earlier row). Zero when
	// Conflict is set.
	Status ReceiptStatus
	ID     uuid.UUID
	// Conflict: the message id was taken before by another payload (a live
	// replay key or an inbox row) and the id is not a stable provider id
	// (Envelope.StableID; for those it is a Duplicate); nothing was written
	// for it.
	Conflict bool
}

// AdmitTx is the admitting transaction as the gateway sees it once the
// inbox has written a batch: events recorded through it commit with the
// batch or not at all.
type AdmitTx interface {
	Recorder() domain.Recorder
}

// AdmittedFunc runs in the admitting transaction after the batch is written,
// with the results in the batch's order; its error rolls the batch back.
type AdmittedFunc func(ctx context.Context, tx AdmitTx, res []Admitted) error

// Admitter writes verified messages into the inbox: for each admission the
// replay key, the inbox row and, when its Need holds, its processing job
// (otherwise the row is written done, processed at its receipt with no
// attempt), all of a batch in one
// transaction, committed before it returns; then, when not nil, runs in that
// transaction before the commit (an Admitter that records no events
// hands it a nil Recorder). The batch holds no two admissions of one
// (source, message id), nor, among unsigned ids, of one (source, body
// digest). Results are in the batch's order; an error means nothing of the
// batch was written.
type Admitter interface {
	Admit(ctx context.Context, batch []Admission, then AdmittedFunc) ([]Admitted, error)
}
