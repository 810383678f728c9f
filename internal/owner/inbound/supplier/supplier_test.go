package supplier_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// fakeUoW keeps connections in a domaintest.Snapshot and events in its
// Recorder; a failing fn rolls both back, as a transaction would.
type fakeUoW struct {
	snap *domaintest.Snapshot[fakeState]
	// sources maps a source to its owner (set up before the test runs).
	sources map[uuid.UUID]uuid.UUID
}

type fakeState struct {
	conns map[uuid.UUID]supplier.Connection
}

func newFake() *fakeUoW {
	return &fakeUoW{
		snap: domaintest.NewSnapshot(fakeState{conns: map[uuid.UUID]supplier.Connection{}},
			func(s fakeState) fakeState { return fakeState{conns: maps.Clone(s.conns)} }),
		sources: map[uuid.UUID]uuid.UUID{},
	}
}

func (f *fakeUoW) Do(ctx context.Context, fn func(tx supplier.Tx) error) error {
	return f.snap.Do(ctx, func(st *fakeState, rec *domaintest.TxRecorder) error {
		return fn(fakeTx{f: f, st: st, rec: rec})
	})
}

// events returns the committed events, oldest first.
func (f *fakeUoW) events() []domaintest.Event { return f.snap.Recorder().Events() }

type fakeTx struct {
	f   *fakeUoW
	st  *fakeState
	rec *domaintest.TxRecorder
}

func (t fakeTx) Connections() supplier.Store { return fakeStore{f: t.f, conns: t.st.conns} }
func (t fakeTx) Recorder() domain.Recorder   { return t.rec }

type fakeStore struct {
	f     *fakeUoW
	conns map[uuid.UUID]supplier.Connection
}

func (s fakeStore) Insert(_ context.Context, c supplier.Connection) error {
	if s.f.sources[c.SourceID] != c.OwnerID {
		return supplier.ErrSourceNotFound
	}
	for _, o := range s.conns {
		if o.SourceID == c.SourceID {
			return supplier.ErrSourceTaken
		}
	}
	s.conns[c.ID] = c
	return nil
}

func (s fakeStore) Get(_ context.Context, owner, id uuid.UUID) (supplier.Connection, error) {
	c, ok := s.conns[id]
	if !ok || c.OwnerID != owner {
		return supplier.Connection{}, domain.ErrNotFound
	}
	return c, nil
}

func (s fakeStore) List(_ context.Context, owner uuid.UUID, _ inbound.PageQuery) ([]supplier.Connection, error) {
	var out []supplier.Connection
	for _, c := range s.conns {
		if c.OwnerID == owner {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s fakeStore) Delete(ctx context.Context, owner, id uuid.UUID) (supplier.Connection, error) {
	c, err := s.Get(ctx, owner, id)
	if err != nil {
		return c, err
	}
	delete(s.conns, id)
	return c, nil
}

func (s fakeStore) Activate(_ context.Context, owner, source uuid.UUID, at time.Time) (supplier.Connection, bool, error) {
	for id, c := range s.conns {
		if c.OwnerID == owner && c.SourceID == source && c.ActivatedAt.IsZero() {
			c.ActivatedAt = at
			s.conns[id] = c
			return c, true, nil
		}
	}
	return supplier.Connection{}, false, nil
}

func TestConnectionLifecycleRecordsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFake()
	owner, source := uuid.New(), uuid.New()
	f.sources[source] = owner
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	svc := supplier.NewService(f, domain.ClockFunc(func() time.Time { return now }))

	v, err := svc.Create(ctx, owner, supplier.CreateInput{Name: "Acme", Supplier: "acme-logistics", SourceID: source})
	require.NoError(t, err)
	require.Equal(t, "connected", v.Status)
	require.Nil(t, v.ActivatedAt)
	require.Equal(t, "/hooks/"+source.String(), v.ReceiveURL)
	require.Len(t, f.events(), 1)
	require.Equal(t, domain.EventSupplierConnected, f.events()[0].Type)
	require.Equal(t, owner, f.events()[0].OwnerID)
	require.Equal(t, "supplier://"+v.ID.String(), f.events()[0].Subject)

	msg := inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: source, ReceivedAt: now.Add(time.Minute)}
	require.NoError(t, svc.Route().Handler.HandleInbound(ctx, msg))
	require.NoError(t, svc.HandleInbound(ctx, msg), "the same message again")
	require.NoError(t, svc.HandleInbound(ctx, inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: source}))
	require.Len(t, f.events(), 2, "activated once, on the first message")
	require.Equal(t, domain.EventSupplierActivated, f.events()[1].Type)
	got, err := svc.Get(ctx, owner, v.ID)
	require.NoError(t, err)
	require.Equal(t, "active", got.Status)
	require.Equal(t, now.Add(time.Minute), *got.ActivatedAt)

	// A message on a source without a connection, or of another owner, does nothing.
	require.NoError(t, svc.HandleInbound(ctx, inbound.Message{ID: uuid.New(), OwnerID: uuid.New(), SourceID: source}))
	require.Len(t, f.events(), 2)

	require.ErrorIs(t, svc.Delete(ctx, uuid.New(), v.ID), supplier.ErrNotFound)
	require.NoError(t, svc.Delete(ctx, owner, v.ID))
	require.Len(t, f.events(), 3)
	require.Equal(t, domain.EventSupplierDisconnected, f.events()[2].Type)
	_, err = svc.Get(ctx, owner, v.ID)
	require.ErrorIs(t, err, supplier.ErrNotFound)
}

func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFake()
	owner, source := uuid.New(), uuid.New()
	f.sources[source] = owner
	svc := supplier.NewService(f, nil)
	_, err := svc.Create(ctx, owner, supplier.CreateInput{Name: "A", SourceID: source})
	require.NoError(t, err)

	cases := []struct {
		name string
		in   supplier.CreateInput
		want error
	}{
		{"source already connected", supplier.CreateInput{Name: "B", SourceID: source}, supplier.ErrSourceTaken},
		{"another owner's source", supplier.CreateInput{Name: "B", SourceID: uuid.New()}, supplier.ErrSourceNotFound},
	}
	for _, c := range cases {
		_, err := svc.Create(ctx, owner, c.in)
		require.ErrorIs(t, err, c.want, c.name)
	}
	_, err = svc.Create(ctx, owner, supplier.CreateInput{Name: " ", SourceID: source})
	require.Equal(t, domain.KindValidation, domain.AsError(err).Kind)
	_, err = svc.Create(ctx, owner, supplier.CreateInput{Name: "x"})
	require.Equal(t, domain.KindValidation, domain.AsError(err).Kind)
	require.Len(t, f.events(), 1)
}

func TestCreateRollsBackWhenRecordFails(t *testing.T) {
	t.Parallel()
	f := newFake()
	owner, source := uuid.New(), uuid.New()
	f.sources[source] = owner
	f.snap.Recorder().Fail(func(string) error { return errors.New("events table gone") })
	svc := supplier.NewService(f, nil)
	_, err := svc.Create(context.Background(), owner, supplier.CreateInput{Name: "A", SourceID: source})
	require.Error(t, err)
	page, err := svc.List(context.Background(), owner, op.PageInput{})
	require.NoError(t, err)
	require.Empty(t, page.Data, "no connection without its event")
}
