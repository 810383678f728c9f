package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Memory is an in-memory UnitOfWork for tests: a transaction sees its own
// writes and they become visible to others only when it commits. It passes
// the same contract suite (publishtest) as the PostgreSQL adapter.
type Memory struct {
	mu     sync.Mutex
	keys   map[string]uuid.UUID
	events []RecordedEvent
	// BeforeClaim, when set, runs before each Claim (tests use it to
	// commit a concurrent publish under the same key).
	BeforeClaim func()
}

// RecordedEvent is an event the Memory recorder committed.
type RecordedEvent struct {
	ID            uuid.UUID
	OwnerID       uuid.UUID
	Type, Subject string
	Data          json.RawMessage
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{keys: map[string]uuid.UUID{}} }

// Events returns the committed events.
func (m *Memory) Events() []RecordedEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]RecordedEvent(nil), m.events...)
}

// Prune forgets the event id and its key, as the event retention does.
func (m *Memory) Prune(id uuid.UUID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.keys {
		if v == id {
			delete(m.keys, k)
		}
	}
}

// Do runs fn in a transaction committed when fn returns nil.
func (m *Memory) Do(ctx context.Context, fn func(tx Tx) error) error {
	t := &memTx{m: m, keys: map[string]uuid.UUID{}}
	if err := fn(t); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range t.keys {
		if _, taken := m.keys[k]; taken {
			return fmt.Errorf("commit: key %s taken concurrently", k)
		}
		m.keys[k] = v
	}
	m.events = append(m.events, t.events...)
	return nil
}

type memTx struct {
	m      *Memory
	keys   map[string]uuid.UUID
	events []RecordedEvent
}

func (t *memTx) Recorder() domain.Recorder { return domain.RecorderFunc(t.record) }
func (t *memTx) Keys() KeyStore            { return t }

func (t *memTx) record(_ context.Context, ownerID uuid.UUID, eventType, subject string, data any) (uuid.UUID, error) {
	if _, ok := domain.LookupEventType(eventType); !ok {
		return uuid.Nil, fmt.Errorf("record %q: undeclared type", eventType)
	}
	raw, err := json.Marshal(data)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return uuid.Nil, fmt.Errorf("record %q: data is not a JSON object", eventType)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, err
	}
	t.events = append(t.events, RecordedEvent{ID: id, OwnerID: ownerID, Type: eventType, Subject: subject, Data: raw})
	return id, nil
}

func memKey(ownerID uuid.UUID, key string) string { return ownerID.String() + "\x00" + key }

func (t *memTx) Find(_ context.Context, ownerID uuid.UUID, key string) (uuid.UUID, bool, error) {
	if id, ok := t.keys[memKey(ownerID, key)]; ok {
		return id, true, nil
	}
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	id, ok := t.m.keys[memKey(ownerID, key)]
	return id, ok, nil
}

func (t *memTx) Claim(_ context.Context, ownerID uuid.UUID, key string, eventID uuid.UUID) (bool, error) {
	if t.m.BeforeClaim != nil {
		t.m.BeforeClaim()
	}
	k := memKey(ownerID, key)
	if _, ok := t.keys[k]; ok {
		return false, nil
	}
	t.m.mu.Lock()
	_, taken := t.m.keys[k]
	t.m.mu.Unlock()
	if taken {
		return false, nil
	}
	t.keys[k] = eventID
	return true, nil
}
