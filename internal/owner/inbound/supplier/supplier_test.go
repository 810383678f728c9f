package supplier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

type recorded struct {
	owner   uuid.UUID
	typ     string
	subject string
	data    any
}

// fakeUoW keeps connections in a map and events in a slice; a failing fn
// rolls both back, as a transaction would.
type fakeUoW struct {
	conns   map[uuid.UUID]supplier.Connection
	sources map[uuid.UUID]uuid.UUID // source → owner
	events  []recorded
	// RecordFunc, when set, replaces the recorder (to make it fail).
	RecordFunc func(eventType string) error
}

func newFake() *fakeUoW {
	return &fakeUoW{conns: map[uuid.UUID]supplier.Connection{}, sources: map[uuid.UUID]uuid.UUID{}}
}

func (f *fakeUoW) Do(_ context.Context, fn func(tx supplier.Tx) error) error {
	conns := make(map[uuid.UUID]supplier.Connection, len(f.conns))
	for k, v := range f.conns {
		conns[k] = v
	}
	events := append([]recorded(nil), f.events...)
	if err := fn(fakeTx{f}); err != nil {
		f.conns, f.events = conns, events
		return err
	}
	return nil
}

type fakeTx struct{ f *fakeUoW }

func (t fakeTx) Connections() supplier.Store { return fakeStore(t) }
func (t fakeTx) Recorder() domain.Recorder {
	return domain.RecorderFunc(func(_ context.Context, owner uuid.UUID, typ, subject string, data any) (uuid.UUID, error) {
		if t.f.RecordFunc != nil {
			if err := t.f.RecordFunc(typ); err != nil {
				return uuid.Nil, err
			}
		}
		t.f.events = append(t.f.events, recorded{owner, typ, subject, data})
		return uuid.New(), nil
	})
}

type fakeStore struct{ f *fakeUoW }

func (s fakeStore) Insert(_ context.Context, c supplier.Connection) error {
	if s.f.sources[c.SourceID] != c.OwnerID {
		return supplier.ErrSourceNotFound
	}
	for _, o := range s.f.conns {
		if o.SourceID == c.SourceID {
			return supplier.ErrSourceTaken
		}
	}
	s.f.conns[c.ID] = c
	return nil
}

func (s fakeStore) Get(_ context.Context, owner, id uuid.UUID) (supplier.Connection, error) {
	c, ok := s.f.conns[id]
	if !ok || c.OwnerID != owner {
		return supplier.Connection{}, domain.ErrNotFound
	}
	return c, nil
}

func (s fakeStore) List(_ context.Context, owner uuid.UUID, _ inbound.PageQuery) ([]supplier.Connection, error) {
	var out []supplier.Connection
	for _, c := range s.f.conns {
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
	delete(s.f.conns, id)
	return c, nil
}

func (s fakeStore) Activate(_ context.Context, owner, source uuid.UUID, at time.Time) (supplier.Connection, bool, error) {
	for id, c := range s.f.conns {
		if c.OwnerID == owner && c.SourceID == source && c.ActivatedAt.IsZero() {
			c.ActivatedAt = at
			s.f.conns[id] = c
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
	require.Len(t, f.events, 1)
	require.Equal(t, domain.EventSupplierConnected, f.events[0].typ)
	require.Equal(t, owner, f.events[0].owner)
	require.Equal(t, "supplier://"+v.ID.String(), f.events[0].subject)

	msg := inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: source, ReceivedAt: now.Add(time.Minute)}
	require.NoError(t, svc.Route().Handler.HandleInbound(ctx, msg))
	require.NoError(t, svc.HandleInbound(ctx, msg), "the same message again")
	require.NoError(t, svc.HandleInbound(ctx, inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: source}))
	require.Len(t, f.events, 2, "activated once, on the first message")
	require.Equal(t, domain.EventSupplierActivated, f.events[1].typ)
	got, err := svc.Get(ctx, owner, v.ID)
	require.NoError(t, err)
	require.Equal(t, "active", got.Status)
	require.Equal(t, now.Add(time.Minute), *got.ActivatedAt)

	// A message on a source without a connection, or of another owner, does nothing.
	require.NoError(t, svc.HandleInbound(ctx, inbound.Message{ID: uuid.New(), OwnerID: uuid.New(), SourceID: source}))
	require.Len(t, f.events, 2)

	require.ErrorIs(t, svc.Delete(ctx, uuid.New(), v.ID), supplier.ErrNotFound)
	require.NoError(t, svc.Delete(ctx, owner, v.ID))
	require.Len(t, f.events, 3)
	require.Equal(t, domain.EventSupplierDisconnected, f.events[2].typ)
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
	require.Len(t, f.events, 1)
}

func TestCreateRollsBackWhenRecordFails(t *testing.T) {
	t.Parallel()
	f := newFake()
	owner, source := uuid.New(), uuid.New()
	f.sources[source] = owner
	f.RecordFunc = func(string) error { return errors.New("events table gone") }
	svc := supplier.NewService(f, nil)
	_, err := svc.Create(context.Background(), owner, supplier.CreateInput{Name: "A", SourceID: source})
	require.Error(t, err)
	page, err := svc.List(context.Background(), owner, op.PageInput{})
	require.NoError(t, err)
	require.Empty(t, page.Data, "no connection without its event")
}
