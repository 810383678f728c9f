// Package domaintest is the fake kit of the domains' tests: a fake event
// Recorder and a snapshot store, the in-memory twins of the event recorder
// and of a database transaction. Each domain's fake unit of work is a
// Snapshot of its state with the Recorder bound to each transaction.
package domaintest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Event is an event a Recorder recorded.
type Event struct {
	ID      uuid.UUID
	OwnerID uuid.UUID
	Type    string
	Subject string
	// Data is the event's data as JSON (always an object).
	Data json.RawMessage
}

// ErrTxEnded is returned by a transaction's Recorder used after its
// transaction ended.
var ErrTxEnded = errors.New("domaintest: transaction has ended")

// Recorder is a fake domain.Recorder that checks what events.Recorder
// checks: the type is declared in the catalog (domain.LookupEventType) and
// the data marshals to a JSON object. It records owner, type, subject and
// data under a fresh time-ordered id. Fail makes it refuse chosen types. It
// is safe for concurrent use.
//
// Its Record commits at once; Tx hands out a Recorder whose events are kept
// only when the transaction commits (Snapshot does this for each Do).
type Recorder struct {
	mu     sync.Mutex
	events []Event
	fail   func(eventType string) error
	strays int
}

var _ domain.Recorder = (*Recorder)(nil)

// NewRecorder returns a Recorder with no events.
func NewRecorder() *Recorder { return &Recorder{} }

// Fail makes Record return fn's error for the event types fn returns one
// for; nil makes every declared type succeed again.
func (r *Recorder) Fail(fn func(eventType string) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = fn
}

// Record records the event at once.
func (r *Recorder) Record(_ context.Context, ownerID uuid.UUID, eventType, subject string, data any) (uuid.UUID, error) {
	ev, err := r.check(ownerID, eventType, subject, data)
	if err != nil {
		return uuid.Nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return ev.ID, nil
}

// check builds the event Record would keep, or refuses it.
func (r *Recorder) check(ownerID uuid.UUID, eventType, subject string, data any) (Event, error) {
	if _, ok := domain.LookupEventType(eventType); !ok {
		return Event{}, fmt.Errorf("record %q: event type not declared in the catalog", eventType)
	}
	r.mu.Lock()
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(eventType); err != nil {
			return Event{}, err
		}
	}
	raw, err := json.Marshal(data)
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return Event{}, fmt.Errorf("record %q: event data is not a JSON object", eventType)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Event{}, fmt.Errorf("record %q: %w", eventType, err)
	}
	return Event{ID: id, OwnerID: ownerID, Type: eventType, Subject: subject, Data: raw}, nil
}

// Events returns the committed events, oldest first.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Append commits events as if another part of the instance had recorded
// them, unchecked.
func (r *Recorder) Append(evs ...Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
}

// Reset forgets every committed event, as retention eventually does.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

// Strays counts Record calls made through a transaction's Recorder after
// that transaction had ended (each also failed). A correct use case leaves
// it at zero.
func (r *Recorder) Strays() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.strays
}

// Tx returns a Recorder for one transaction: its events are pending until
// Commit, dropped by End without Commit, and a Record after End fails.
func (r *Recorder) Tx() *TxRecorder { return &TxRecorder{r: r, open: true} }

// TxRecorder is the Recorder of one transaction (see Recorder.Tx). A
// transaction runs on one goroutine, so it takes no lock of its own.
type TxRecorder struct {
	r       *Recorder
	pending []Event
	open    bool
}

var _ domain.Recorder = (*TxRecorder)(nil)

// Record records the event in the transaction.
func (t *TxRecorder) Record(_ context.Context, ownerID uuid.UUID, eventType, subject string, data any) (uuid.UUID, error) {
	if !t.open {
		t.r.mu.Lock()
		t.r.strays++
		t.r.mu.Unlock()
		return uuid.Nil, fmt.Errorf("record %q: %w", eventType, ErrTxEnded)
	}
	ev, err := t.r.check(ownerID, eventType, subject, data)
	if err != nil {
		return uuid.Nil, err
	}
	t.pending = append(t.pending, ev)
	return ev.ID, nil
}

// Append adds events to the transaction unchecked, as a database trigger
// would.
func (t *TxRecorder) Append(evs ...Event) { t.pending = append(t.pending, evs...) }

// Events returns what the transaction sees: the committed events, then its
// own pending ones.
func (t *TxRecorder) Events() []Event { return append(t.r.Events(), t.pending...) }

// Pending returns the transaction's own events, oldest first.
func (t *TxRecorder) Pending() []Event { return append([]Event(nil), t.pending...) }

// Commit commits the pending events and ends the transaction.
func (t *TxRecorder) Commit() {
	t.open = false
	t.r.Append(t.pending...)
	t.pending = nil
}

// End ends the transaction, dropping pending events unless Commit ran.
func (t *TxRecorder) End() {
	t.open = false
	t.pending = nil
}
