package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Channel is the PostgreSQL NOTIFY channel that wakes the relay.
const Channel = "standmeet_events"

// ErrUndeclaredType is returned by Record for an event type the catalog does
// not declare; nothing is written.
var ErrUndeclaredType = errors.New("event type not declared in the catalog")

// ErrDataNotObject is returned by Record when the event's data does not
// marshal to a JSON object (nil, a slice, a string, …); nothing is written.
var ErrDataNotObject = errors.New("event data is not a JSON object")

// NotifySpacing is the least time between two wake-ups one Recorder queues.
// PostgreSQL serializes the commits of notifying transactions (each holds the
// notify queue's lock through its WAL flush), so a wake-up per transaction
// would undo group commit under load; one per spacing keeps the relay as
// prompt. An event written without one is found by the drain the relay runs
// NotifySpacing after every wake-up.
const NotifySpacing = 25 * time.Millisecond

// Recorder writes events. It holds the catalog check, the metrics and the
// time of the last wake-up it queued; bind it to a transaction with With.
type Recorder struct {
	isDeclared func(eventType string) bool
	metrics    *Metrics
	// notified is the time (Unix nanoseconds) the last wake-up was queued.
	notified atomic.Int64
	// batch are the statements a batch flushes with, built for the routes
	// (Route) that let it write an event no subscriber wants as relayed.
	batch batchSQL
}

// NewRecorder returns a Recorder that refuses every type isDeclared rejects.
// The composition root passes the domain catalog's lookup here, so this
// package needs no domain import. m may be nil.
func NewRecorder(isDeclared func(eventType string) bool, m *Metrics) *Recorder {
	batch, err := newBatchSQL(nil)
	if err != nil {
		panic(fmt.Sprintf("events: the batch statements without routes: %v", err))
	}
	return &Recorder{isDeclared: isDeclared, metrics: m, batch: batch}
}

// Route gives the Recorder the relay's subscriptions, so that a batch
// (Batch) writes an event that no subscription wants as already relayed: its
// type has no subscriber, or every subscriber of its type has an Owners
// query that leaves the event's owner out, asked by the statement that
// writes the batch. Such an event costs the relay nothing, as its relay
// would insert no job. The question is asked in the writing transaction: an
// endpoint committed after it does not get the event, as it would not once
// the relay had run. Route is called before the Recorder is used.
func (r *Recorder) Route(subs []Subscription) error {
	rs, err := newRoutes(append([]Subscription(nil), subs...))
	if err != nil {
		return fmt.Errorf("route recorder: %w", err)
	}
	batch, err := newBatchSQL(rs)
	if err != nil {
		return fmt.Errorf("route recorder: %w", err)
	}
	r.batch = batch
	return nil
}

// With binds the Recorder to the caller's transaction. The result satisfies
// domain.Recorder.
func (r *Recorder) With(tx pgx.Tx) *TxRecorder {
	return &TxRecorder{r: r, tx: tx}
}

// TxRecorder records events in one transaction.
type TxRecorder struct {
	r  *Recorder
	tx pgx.Tx
}

// insertEvent writes the row and queues the wake-up in one round trip. The
// NOTIFY payload is constant on purpose: PostgreSQL delivers identical
// channel+payload pairs of one transaction once, at commit, so a bulk write
// wakes the relay once instead of flooding it; a listener only needs a hint
// to look. insertEventQuiet writes the row alone.
const (
	insertEvent = `INSERT INTO events (id, owner_id, type, subject, data)
VALUES ($1, $2, $3, $4, $5)
RETURNING pg_notify('` + Channel + `', '')::text`
	insertEventQuiet = `INSERT INTO events (id, owner_id, type, subject, data)
VALUES ($1, $2, $3, $4, $5)
RETURNING ''::text`
)

// wakeRelay queues a wake-up alone (see Wake).
const wakeRelay = `SELECT pg_notify('` + Channel + `', '')`

// Wake queues a relay wake-up in the bound transaction for events it writes
// without Record (corpus_notes_emit, a row trigger, writes
// corpus.note.changed), under Record's spacing: at most one per
// NotifySpacing per Recorder, so such writes group-commit as Record's do. It
// costs a statement only when it queues one.
func (t *TxRecorder) Wake(ctx context.Context) error {
	if !t.r.wake() {
		return nil
	}
	if _, err := t.tx.Exec(ctx, wakeRelay); err != nil {
		return fmt.Errorf("wake the relay: %w", err)
	}
	return nil
}

// wake reports whether a write now queues a wake-up: the first one after
// NotifySpacing has passed since the last does. A wake-up whose transaction
// rolls back still counts, so events written in the spacing after it wait
// for the relay's poll.
func (r *Recorder) wake() bool {
	_, _, ok := r.claimWake()
	return ok
}

// claimWake is wake that also returns the time of the wake-up before (last)
// and of the one it claims (at), so a write that queues none after all can
// give the spacing back (CompareAndSwap(at, last)).
func (r *Recorder) claimWake() (last, at int64, ok bool) {
	at = time.Now().UnixNano()
	last = r.notified.Load()
	if at-last >= int64(NotifySpacing) && r.notified.CompareAndSwap(last, at) {
		return last, at, true
	}
	return 0, 0, false
}

// Record writes an event of eventType about subject, owned by ownerID, in the
// bound transaction, and returns its id. The event and its wake-up (at most
// one per NotifySpacing) exist only if the transaction commits. It refuses an undeclared type
// (ErrUndeclaredType) and data that is not a JSON object (ErrDataNotObject)
// without writing anything.
func (t *TxRecorder) Record(ctx context.Context, ownerID uuid.UUID, eventType, subject string, data any) (uuid.UUID, error) {
	id, raw, err := t.r.prepare(eventType, data)
	if err != nil {
		return uuid.Nil, err
	}
	q := insertEventQuiet
	if t.r.wake() {
		q = insertEvent
	}
	var ignored string
	if err := t.tx.QueryRow(ctx, q, id, ownerID, eventType, subject, raw).Scan(&ignored); err != nil {
		return uuid.Nil, fmt.Errorf("record %q: insert event: %w", eventType, err)
	}
	t.r.metrics.incRecorded(eventType)
	return id, nil
}

// prepare checks an event before it is written: a declared type
// (ErrUndeclaredType) and data that is a JSON object (ErrDataNotObject);
// it returns the event's new id and its data as JSON.
func (r *Recorder) prepare(eventType string, data any) (uuid.UUID, json.RawMessage, error) {
	if r.isDeclared == nil || !r.isDeclared(eventType) {
		return uuid.Nil, nil, fmt.Errorf("record %q: %w", eventType, ErrUndeclaredType)
	}
	raw, err := marshalObject(data)
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("record %q: %w", eventType, err)
	}
	id, err := newEventID()
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("record %q: %w", eventType, err)
	}
	return id, raw, nil
}

// marshalObject returns data as JSON, which must be an object.
func marshalObject(data any) (json.RawMessage, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDataNotObject, err)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, ErrDataNotObject
	}
	return raw, nil
}

// newEventID returns a time-ordered UUIDv7, which keeps the primary-key
// index append-mostly at millions of rows.
func newEventID() (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("new event id: %w", err)
	}
	return id, nil
}
