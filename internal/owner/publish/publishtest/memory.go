package publishtest

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner/publish"
)

// Memory is an in-memory publish.UnitOfWork: a transaction sees its own
// writes and they become visible to others only when it commits; a key
// claimed by a transaction that committed meanwhile fails the commit, as
// the unique index would. Transactions run concurrently, unlike
// domaintest.Snapshot's, so a test can commit one inside another
// (BeforeClaim). It passes RunContract, as the PostgreSQL adapter does.
type Memory struct {
	mu   sync.Mutex
	keys map[string]publish.Claimed
	rec  *domaintest.Recorder
	// BeforeClaim, when set, runs before each Claim (tests use it to
	// commit a concurrent publish under the same key).
	BeforeClaim func()
}

var _ publish.UnitOfWork = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{keys: map[string]publish.Claimed{}, rec: domaintest.NewRecorder()}
}

// Events returns the committed events, oldest first.
func (m *Memory) Events() []domaintest.Event { return m.rec.Events() }

// Recorder returns the fake Recorder (Fail injects recording failures).
func (m *Memory) Recorder() *domaintest.Recorder { return m.rec }

// Prune forgets the event's idempotency key, as the event retention does.
func (m *Memory) Prune(id uuid.UUID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	maps.DeleteFunc(m.keys, func(_ string, v publish.Claimed) bool { return v.EventID == id })
}

// Do runs fn in a transaction committed when fn returns nil.
func (m *Memory) Do(ctx context.Context, fn func(tx publish.Tx) error) error {
	t := &memTx{m: m, keys: map[string]publish.Claimed{}, rec: m.rec.Tx()}
	defer t.rec.End()
	if err := fn(t); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range t.keys {
		if _, taken := m.keys[k]; taken {
			return fmt.Errorf("commit: key %s taken concurrently", k)
		}
	}
	maps.Copy(m.keys, t.keys)
	t.rec.Commit()
	return nil
}

type memTx struct {
	m    *Memory
	keys map[string]publish.Claimed
	rec  *domaintest.TxRecorder
}

func (t *memTx) Recorder() domain.Recorder { return t.rec }
func (t *memTx) Keys() publish.KeyStore    { return t }

func memKey(ownerID uuid.UUID, key string) string { return ownerID.String() + "\x00" + key }

func (t *memTx) Find(_ context.Context, ownerID uuid.UUID, key string) (publish.Claimed, bool, error) {
	if c, ok := t.keys[memKey(ownerID, key)]; ok {
		return c, true, nil
	}
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	c, ok := t.m.keys[memKey(ownerID, key)]
	return c, ok, nil
}

func (t *memTx) Claim(_ context.Context, ownerID uuid.UUID, key string, c publish.Claimed) (bool, error) {
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
	t.keys[k] = c
	return true, nil
}
