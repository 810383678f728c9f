package suppliertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// Harness is one implementation of the connection store, with what the
// contract needs to set it up.
type Harness struct {
	UoW supplier.UnitOfWork
	// NewOwner returns an owner id rows may reference.
	NewOwner func(t *testing.T) uuid.UUID
	// NewSource returns a new inbound source of ownerID.
	NewSource func(t *testing.T, ownerID uuid.UUID) uuid.UUID
}

// RunContract runs the connection store's contract; newHarness returns a
// fresh implementation. The in-memory fake and the PostgreSQL adapter both
// pass it, so the fake the service's unit tests use cannot drift.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// Base is the contract's reference time, microsecond-aligned as PostgreSQL
// stores times.
var Base = time.Date(2026, 3, 4, 5, 6, 7, 654321000, time.UTC)

func connectionOf(owner, source uuid.UUID, at time.Time) supplier.Connection {
	return supplier.Connection{ID: uuid.New(), OwnerID: owner, SourceID: source, Name: "Acme", Supplier: "acme-logistics", CreatedAt: at}
}

// norm makes connections comparable across stores: times in UTC.
func norm(c supplier.Connection) supplier.Connection {
	c.CreatedAt = c.CreatedAt.UTC()
	if !c.ActivatedAt.IsZero() {
		c.ActivatedAt = c.ActivatedAt.UTC()
	}
	return c
}

func do(h Harness, fn func(ctx context.Context, s supplier.Store) error) error {
	return h.UoW.Do(context.Background(), func(tx supplier.Tx) error { return fn(context.Background(), tx.Connections()) })
}

func insert(t *testing.T, h Harness, c supplier.Connection) {
	t.Helper()
	require.NoError(t, do(h, func(ctx context.Context, s supplier.Store) error { return s.Insert(ctx, c) }))
}

func get(h Harness, owner, id uuid.UUID) (supplier.Connection, error) {
	var c supplier.Connection
	err := do(h, func(ctx context.Context, s supplier.Store) error {
		var err error
		c, err = s.Get(ctx, owner, id)
		return err
	})
	return norm(c), err
}

func ids(cs []supplier.Connection) []uuid.UUID {
	out := []uuid.UUID{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

var contractCases = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"insert then get, scoped by owner", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		c := connectionOf(owner, h.NewSource(t, owner), Base)
		insert(t, h, c)
		got, err := get(h, owner, c.ID)
		require.NoError(t, err)
		require.Equal(t, norm(c), got)
		require.True(t, got.ActivatedAt.IsZero(), "a new connection is not active")
		_, err = get(h, other, c.ID)
		require.ErrorIs(t, err, domain.ErrNotFound, "another owner's connection")
		_, err = get(h, owner, uuid.New())
		require.ErrorIs(t, err, domain.ErrNotFound)
	}},
	{"insert refuses a source that is missing, another owner's or taken", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		src, otherSrc := h.NewSource(t, owner), h.NewSource(t, other)
		first := connectionOf(owner, src, Base)
		insert(t, h, first)
		for _, c := range []struct {
			name string
			conn supplier.Connection
			want error
		}{
			{"missing source", connectionOf(owner, uuid.New(), Base), supplier.ErrSourceNotFound},
			{"another owner's source", connectionOf(owner, otherSrc, Base), supplier.ErrSourceNotFound},
			{"source already connected", connectionOf(owner, src, Base), supplier.ErrSourceTaken},
			{"source connected, asked by another owner", connectionOf(other, src, Base), supplier.ErrSourceNotFound},
		} {
			err := do(h, func(ctx context.Context, s supplier.Store) error { return s.Insert(ctx, c.conn) })
			require.ErrorIs(t, err, c.want, c.name)
			_, err = get(h, c.conn.OwnerID, c.conn.ID)
			require.ErrorIs(t, err, domain.ErrNotFound, "%s: nothing stored", c.name)
		}
		got, err := get(h, owner, first.ID)
		require.NoError(t, err)
		require.Equal(t, norm(first), got)
	}},
	{"list pages newest first, limit+1 rows", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		a := connectionOf(owner, h.NewSource(t, owner), Base)
		b := connectionOf(owner, h.NewSource(t, owner), Base.Add(time.Second))
		c := connectionOf(owner, h.NewSource(t, owner), Base.Add(2*time.Second))
		// d ties with c on created_at: the id breaks the tie.
		d := connectionOf(owner, h.NewSource(t, owner), c.CreatedAt)
		for _, x := range []supplier.Connection{a, b, c, d, connectionOf(other, h.NewSource(t, other), Base.Add(time.Hour))} {
			insert(t, h, x)
		}
		hi, lo := c, d
		if lo.ID.String() > hi.ID.String() {
			hi, lo = lo, hi
		}
		list := func(q inbound.PageQuery) []uuid.UUID {
			var out []supplier.Connection
			require.NoError(t, do(h, func(ctx context.Context, s supplier.Store) error {
				var err error
				out, err = s.List(ctx, owner, q)
				return err
			}))
			return ids(out)
		}
		require.Equal(t, []uuid.UUID{hi.ID, lo.ID, b.ID, a.ID}, list(inbound.PageQuery{Limit: 10}))
		require.Equal(t, []uuid.UUID{hi.ID, lo.ID, b.ID}, list(inbound.PageQuery{Limit: 2}), "limit+1 rows tell there is more")
		require.Equal(t, []uuid.UUID{lo.ID, b.ID}, list(inbound.PageQuery{Limit: 1, After: &inbound.Cursor{At: hi.CreatedAt, ID: hi.ID}}))
		require.Equal(t, []uuid.UUID{a.ID}, list(inbound.PageQuery{Limit: 2, After: &inbound.Cursor{At: b.CreatedAt, ID: b.ID}}))
		require.Equal(t, []uuid.UUID{}, list(inbound.PageQuery{Limit: 2, After: &inbound.Cursor{At: a.CreatedAt, ID: a.ID}}))
	}},
	{"delete returns the connection as it was, once", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		src := h.NewSource(t, owner)
		c := connectionOf(owner, src, Base)
		insert(t, h, c)
		del := func(o uuid.UUID) (supplier.Connection, error) {
			var got supplier.Connection
			err := do(h, func(ctx context.Context, s supplier.Store) error {
				var err error
				got, err = s.Delete(ctx, o, c.ID)
				return err
			})
			return norm(got), err
		}
		_, err := del(other)
		require.ErrorIs(t, err, domain.ErrNotFound, "another owner's connection")
		got, err := del(owner)
		require.NoError(t, err)
		require.Equal(t, norm(c), got)
		_, err = get(h, owner, c.ID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		_, err = del(owner)
		require.ErrorIs(t, err, domain.ErrNotFound)
		insert(t, h, connectionOf(owner, src, Base.Add(time.Minute)))
	}},
	{"activate sets the time once, on the owner's source only", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		src, bare := h.NewSource(t, owner), h.NewSource(t, owner)
		c := connectionOf(owner, src, Base)
		insert(t, h, c)
		activate := func(o, source uuid.UUID, at time.Time) (supplier.Connection, bool) {
			var got supplier.Connection
			var ok bool
			require.NoError(t, do(h, func(ctx context.Context, s supplier.Store) error {
				var err error
				got, ok, err = s.Activate(ctx, o, source, at)
				return err
			}))
			return norm(got), ok
		}
		_, ok := activate(other, src, Base.Add(time.Minute))
		require.False(t, ok, "another owner's source")
		_, ok = activate(owner, bare, Base.Add(time.Minute))
		require.False(t, ok, "a source without a connection")
		_, ok = activate(owner, uuid.New(), Base.Add(time.Minute))
		require.False(t, ok, "a missing source")

		at := Base.Add(time.Minute)
		got, ok := activate(owner, src, at)
		require.True(t, ok)
		want := norm(c)
		want.ActivatedAt = at
		require.Equal(t, want, got)
		_, ok = activate(owner, src, at.Add(time.Hour))
		require.False(t, ok, "active already")
		stored, err := get(h, owner, c.ID)
		require.NoError(t, err)
		require.Equal(t, want, stored, "the first activation's time stays")
	}},
	{"a failed transaction keeps nothing", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		src := h.NewSource(t, owner)
		kept := connectionOf(owner, src, Base)
		insert(t, h, kept)
		dropped := connectionOf(owner, h.NewSource(t, owner), Base)
		refused := errors.New("refused")
		err := do(h, func(ctx context.Context, s supplier.Store) error {
			if err := s.Insert(ctx, dropped); err != nil {
				return err
			}
			if _, _, err := s.Activate(ctx, owner, src, Base.Add(time.Minute)); err != nil {
				return err
			}
			if _, err := s.Delete(ctx, owner, kept.ID); err != nil {
				return err
			}
			return refused
		})
		require.Same(t, refused, err)
		_, err = get(h, owner, dropped.ID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		got, err := get(h, owner, kept.ID)
		require.NoError(t, err)
		require.Equal(t, norm(kept), got, "neither activated nor deleted")
	}},
}
