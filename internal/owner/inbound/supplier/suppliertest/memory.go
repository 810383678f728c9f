// Package suppliertest holds the supplier connections' in-memory unit of
// work and the connection store's contract suite, which it and the
// PostgreSQL adapter both pass.
package suppliertest

import (
	"bytes"
	"context"
	"maps"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// Memory implements supplier.UnitOfWork in memory: a domaintest.Snapshot of
// the connections, with the fake Recorder bound to each transaction, so a
// failing use case leaves neither a connection nor an event behind. The
// inbound sources connections refer to are set up with AddSource.
type Memory struct {
	snap *domaintest.Snapshot[state]
}

type state struct {
	conns map[uuid.UUID]supplier.Connection
	// sources maps each inbound source to its owner.
	sources map[uuid.UUID]uuid.UUID
}

func (s state) clone() state {
	return state{conns: maps.Clone(s.conns), sources: maps.Clone(s.sources)}
}

var _ supplier.UnitOfWork = (*Memory)(nil)

// NewMemory returns a store with no sources and no connections.
func NewMemory() *Memory {
	return &Memory{snap: domaintest.NewSnapshot(state{
		conns: map[uuid.UUID]supplier.Connection{}, sources: map[uuid.UUID]uuid.UUID{},
	}, state.clone)}
}

// AddSource makes sourceID an inbound source of ownerID, outside any
// transaction (a test's setup: sources belong to the inbound store).
func (m *Memory) AddSource(ownerID, sourceID uuid.UUID) {
	m.snap.Update(func(st *state) { st.sources[sourceID] = ownerID })
}

// Events returns the committed events, oldest first.
func (m *Memory) Events() []domaintest.Event { return m.snap.Recorder().Events() }

// Recorder returns the fake Recorder (Fail injects recording failures).
func (m *Memory) Recorder() *domaintest.Recorder { return m.snap.Recorder() }

// Do implements supplier.UnitOfWork.
func (m *Memory) Do(ctx context.Context, fn func(tx supplier.Tx) error) error {
	return m.snap.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		return fn(memTx{st: st, rec: rec})
	})
}

type memTx struct {
	st  *state
	rec *domaintest.TxRecorder
}

func (t memTx) Connections() supplier.Store { return store{st: t.st} }
func (t memTx) Recorder() domain.Recorder   { return t.rec }

type store struct{ st *state }

func (s store) Insert(_ context.Context, c supplier.Connection) error {
	if owner, ok := s.st.sources[c.SourceID]; !ok || owner != c.OwnerID {
		return supplier.ErrSourceNotFound
	}
	for _, o := range s.st.conns {
		if o.SourceID == c.SourceID {
			return supplier.ErrSourceTaken
		}
	}
	c.ActivatedAt = time.Time{}
	s.st.conns[c.ID] = c
	return nil
}

func (s store) Get(_ context.Context, ownerID, id uuid.UUID) (supplier.Connection, error) {
	c, ok := s.st.conns[id]
	if !ok || c.OwnerID != ownerID {
		return supplier.Connection{}, domain.ErrNotFound
	}
	return c, nil
}

// newer orders connections newest first: (created_at, id) descending.
func newer(a, b supplier.Connection) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return bytes.Compare(a.ID[:], b.ID[:]) > 0
}

func (s store) List(_ context.Context, ownerID uuid.UUID, q inbound.PageQuery) ([]supplier.Connection, error) {
	var out []supplier.Connection
	for _, c := range s.st.conns {
		if c.OwnerID != ownerID {
			continue
		}
		if q.After != nil && !newer(supplier.Connection{CreatedAt: q.After.At, ID: q.After.ID}, c) {
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i], out[j]) })
	if len(out) > q.Limit+1 {
		out = out[:q.Limit+1]
	}
	return out, nil
}

func (s store) Delete(ctx context.Context, ownerID, id uuid.UUID) (supplier.Connection, error) {
	c, err := s.Get(ctx, ownerID, id)
	if err != nil {
		return c, err
	}
	delete(s.st.conns, id)
	return c, nil
}

func (s store) Activate(_ context.Context, ownerID, sourceID uuid.UUID, at time.Time) (supplier.Connection, bool, error) {
	for id, c := range s.st.conns {
		if c.OwnerID == ownerID && c.SourceID == sourceID && c.ActivatedAt.IsZero() {
			c.ActivatedAt = at
			s.st.conns[id] = c
			return c, true, nil
		}
	}
	return supplier.Connection{}, false, nil
}
