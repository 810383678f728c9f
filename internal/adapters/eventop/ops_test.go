package eventop_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// fakeStore is a hand-written fake of the Store port.
type fakeStore struct {
	FindFunc         func(ctx context.Context, ownerID uuid.UUID, q events.Query) (events.Page, error)
	ListPoisonedFunc func(ctx context.Context, ownerID uuid.UUID, limit int, cursor string) (events.Page, error)
	GetFunc          func(ctx context.Context, ownerID, eventID uuid.UUID) (events.Event, error)
	ReleaseFunc      func(ctx context.Context, ownerID, eventID uuid.UUID) (events.Event, error)
}

func (f fakeStore) Find(ctx context.Context, ownerID uuid.UUID, q events.Query) (events.Page, error) {
	return f.FindFunc(ctx, ownerID, q)
}

func (f fakeStore) ListPoisoned(ctx context.Context, ownerID uuid.UUID, limit int, cursor string) (events.Page, error) {
	return f.ListPoisonedFunc(ctx, ownerID, limit, cursor)
}

func (f fakeStore) Get(ctx context.Context, ownerID, eventID uuid.UUID) (events.Event, error) {
	return f.GetFunc(ctx, ownerID, eventID)
}

func (f fakeStore) Release(ctx context.Context, ownerID, eventID uuid.UUID) (events.Event, error) {
	return f.ReleaseFunc(ctx, ownerID, eventID)
}

func call(t *testing.T, ops op.Set, name string, caller op.Caller, fill func(in any)) (any, error) {
	t.Helper()
	d, ok := ops.Find(name)
	require.True(t, ok, name)
	in := d.NewInput()
	if fill != nil {
		fill(in)
	}
	return d.Call(context.Background(), caller, in)
}

func TestOpsAreDeclaredAsTheContractSays(t *testing.T) {
	t.Parallel()
	ops := eventop.Ops(fakeStore{})
	want := map[string][2]string{
		"events.list":     {http.MethodGet, "/api/admin/events"},
		"events.poisoned": {http.MethodGet, "/api/admin/events/poisoned"},
		"events.get":      {http.MethodGet, "/api/admin/events/{id}"},
		"events.release":  {http.MethodPost, "/api/admin/events/{id}/release"},
	}
	require.Len(t, ops, len(want))
	routes := map[string]httpapi.Route{}
	for _, r := range httpapi.Routes() {
		routes[r.Op] = r
	}
	for name, mp := range want {
		d, ok := ops.Find(name)
		require.True(t, ok, name)
		require.Equal(t, mp[0], routes[name].Method, name)
		require.Equal(t, mp[1], routes[name].Path, name)
		require.Equal(t, http.StatusOK, routes[name].SuccessStatus(), name)
		require.NotEmpty(t, d.Meta().Summary, name)
		require.False(t, d.Meta().Public, name)
	}
}

func TestListPassesOwnerFilterAndPage(t *testing.T) {
	t.Parallel()
	owner := uuid.New()
	evID := uuid.New()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var gotOwner uuid.UUID
	var got events.Query
	ops := eventop.Ops(fakeStore{
		FindFunc: func(_ context.Context, o uuid.UUID, q events.Query) (events.Page, error) {
			gotOwner, got = o, q
			return events.Page{
				Events: []events.Event{{
					ID: evID, Type: "x.y", Subject: "wiki://a", OccurredAt: at,
					Data: json.RawMessage(`{"op":"created"}`), FannedOutAt: &at,
					Fanout: json.RawMessage(`[{"subscriber":"corpus.index","job_id":7}]`),
				}},
				NextCursor: "next",
			}, nil
		},
	})
	out, err := call(t, ops, "events.list", op.Caller{OwnerID: owner}, func(in any) {
		in.(*eventop.ListInput).Type = "x.y"
		in.(*eventop.ListInput).Cursor = "c1"
		in.(*eventop.ListInput).Limit = op.MaxLimit
		in.(*eventop.ListInput).Since = "2026-01-01T00:00:00Z"
		in.(*eventop.ListInput).Until = "2026-01-03T00:00:00+01:00"
	})
	require.NoError(t, err)
	require.Equal(t, owner, gotOwner)
	require.Equal(t, "x.y", got.Type)
	require.Equal(t, op.MaxLimit, got.Limit)
	require.Equal(t, "c1", got.Cursor)
	require.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), got.Since.UTC())
	require.Equal(t, time.Date(2026, 1, 2, 23, 0, 0, 0, time.UTC), got.Until.UTC())
	b, err := json.Marshal(out)
	require.NoError(t, err)
	require.JSONEq(t, `{"data":[{"id":"`+evID.String()+`","type":"x.y","subject":"wiki://a",
		"occurred_at":"2026-01-02T03:04:05Z","data":{"op":"created"},"fanned_out_at":"2026-01-02T03:04:05Z",
		"fanout":[{"subscriber":"corpus.index","job_id":7}],"relay_attempts":0,"relay_error":null,"poisoned_at":null}],
		"next_cursor":"next","prev_cursor":null}`, string(b))

	for _, bad := range []func(in *eventop.ListInput){
		func(in *eventop.ListInput) { in.Since = "yesterday" },
		func(in *eventop.ListInput) { in.Until = "2026-13-01T00:00:00Z" },
		func(in *eventop.ListInput) { in.Since, in.Until = "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z" },
		func(in *eventop.ListInput) { in.Cursor, in.Before = "a", "b" },
	} {
		_, err := call(t, ops, "events.list", op.Caller{OwnerID: owner}, func(in any) { bad(in.(*eventop.ListInput)) })
		de := domain.AsError(err)
		require.NotNil(t, de, "%v", err)
		require.Equal(t, domain.KindValidation, de.Kind)
	}
}

func TestPoisonedLastPageHasNullCursorAndEmptyData(t *testing.T) {
	t.Parallel()
	ops := eventop.Ops(fakeStore{
		ListPoisonedFunc: func(_ context.Context, _ uuid.UUID, limit int, _ string) (events.Page, error) {
			require.Equal(t, op.DefaultLimit, limit)
			return events.Page{Events: []events.Event{}}, nil
		},
	})
	out, err := call(t, ops, "events.poisoned", op.Caller{OwnerID: uuid.New()}, nil)
	require.NoError(t, err)
	b, err := json.Marshal(out)
	require.NoError(t, err)
	require.JSONEq(t, `{"data":[],"next_cursor":null}`, string(b))
}

func TestStoreErrorsBecomeDomainErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection refused")
	cases := []struct {
		name     string
		storeErr error
		wantKind domain.Kind
		wantCode string
	}{
		{"not found", events.ErrNotFound, domain.KindNotFound, "NOT_FOUND"},
		{"not poisoned", events.ErrNotPoisoned, domain.KindConflict, "EVENT_NOT_POISONED"},
		{"bad cursor", events.ErrBadCursor, domain.KindValidation, "INVALID_CURSOR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ops := eventop.Ops(fakeStore{
				ReleaseFunc: func(context.Context, uuid.UUID, uuid.UUID) (events.Event, error) {
					return events.Event{}, tc.storeErr
				},
			})
			_, err := call(t, ops, "events.release", op.Caller{OwnerID: uuid.New()}, nil)
			de := domain.AsError(err)
			require.NotNil(t, de, "%v", err)
			require.Equal(t, tc.wantKind, de.Kind)
			require.Equal(t, tc.wantCode, de.Code)
		})
	}
	ops := eventop.Ops(fakeStore{
		GetFunc: func(context.Context, uuid.UUID, uuid.UUID) (events.Event, error) { return events.Event{}, boom },
	})
	_, err := call(t, ops, "events.get", op.Caller{OwnerID: uuid.New()}, nil)
	require.ErrorIs(t, err, boom)
	require.Nil(t, domain.AsError(err), "an infrastructure failure is internal, not a client error")
}

// TestReleaseOverTheRealStore: another owner's poisoned event is a 404; the
// owner's own comes back released.
func TestReleaseOverTheRealStore(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	me, other := uuid.New(), uuid.New()
	var id uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO events (owner_id, type, relay_attempts, relay_error, poisoned_at)
VALUES ($1, 'x.y', 5, 'insert jobs: boom', now()) RETURNING id`, me).Scan(&id))
	ops := eventop.Ops(events.NewStore(pool))
	setID := func(in any) { in.(*eventop.IDInput).ID = id }

	_, err := call(t, ops, "events.release", op.Caller{OwnerID: other}, setID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	out, err := call(t, ops, "events.poisoned", op.Caller{OwnerID: other}, nil)
	require.NoError(t, err)
	require.Empty(t, out.(op.Page[eventop.Event]).Data)

	out, err = call(t, ops, "events.poisoned", op.Caller{OwnerID: me}, nil)
	require.NoError(t, err)
	require.Len(t, out.(op.Page[eventop.Event]).Data, 1)

	out, err = call(t, ops, "events.release", op.Caller{OwnerID: me}, setID)
	require.NoError(t, err)
	ev := out.(eventop.Event)
	require.Equal(t, id, ev.ID)
	require.Nil(t, ev.PoisonedAt)
	require.Zero(t, ev.RelayAttempts)

	_, err = call(t, ops, "events.release", op.Caller{OwnerID: me}, setID)
	require.Equal(t, domain.KindConflict, domain.AsError(err).Kind)
	out, err = call(t, ops, "events.get", op.Caller{OwnerID: me}, setID)
	require.NoError(t, err)
	require.Equal(t, id, out.(eventop.Event).ID)
	_, err = call(t, ops, "events.get", op.Caller{OwnerID: other}, setID)
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestListPagesBothWaysAndFiltersByTimeOverTheRealStore(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	me, other := uuid.New(), uuid.New()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ids []uuid.UUID // oldest first
	for i := range 7 {
		typ := "a.b"
		if i%2 == 1 {
			typ = "c.d"
		}
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO events (owner_id, type, occurred_at, fanned_out_at)
VALUES ($1, $2, $3, $3) RETURNING id`, me, typ, base.Add(time.Duration(i)*time.Minute)).Scan(&id))
		ids = append(ids, id)
	}
	_, err := pool.Exec(ctx, `INSERT INTO events (owner_id, type, occurred_at) VALUES ($1, 'a.b', $2)`, other, base)
	require.NoError(t, err)
	ops := eventop.Ops(events.NewStore(pool))
	list := func(fill func(in *eventop.ListInput)) eventop.EventPage {
		t.Helper()
		out, err := call(t, ops, "events.list", op.Caller{OwnerID: me}, func(in any) { fill(in.(*eventop.ListInput)) })
		require.NoError(t, err)
		return out.(eventop.EventPage)
	}
	idsOf := func(p eventop.EventPage) []uuid.UUID {
		var out []uuid.UUID
		for _, e := range p.Data {
			out = append(out, e.ID)
		}
		return out
	}

	p1 := list(func(in *eventop.ListInput) { in.Limit = 3 })
	require.Equal(t, []uuid.UUID{ids[6], ids[5], ids[4]}, idsOf(p1), "newest first")
	require.Nil(t, p1.PrevCursor, "the newest page has nothing newer")
	p2 := list(func(in *eventop.ListInput) { in.Limit = 3; in.Cursor = *p1.NextCursor })
	require.Equal(t, []uuid.UUID{ids[3], ids[2], ids[1]}, idsOf(p2))
	require.NotNil(t, p2.PrevCursor)
	p3 := list(func(in *eventop.ListInput) { in.Limit = 3; in.Cursor = *p2.NextCursor })
	require.Equal(t, []uuid.UUID{ids[0]}, idsOf(p3))
	require.Nil(t, p3.NextCursor, "the oldest page has nothing older")
	back := list(func(in *eventop.ListInput) { in.Limit = 3; in.Before = *p3.PrevCursor })
	require.Equal(t, idsOf(p2), idsOf(back), "before= goes back to the newer page")
	back = list(func(in *eventop.ListInput) { in.Limit = 3; in.Before = *back.PrevCursor })
	require.Equal(t, idsOf(p1), idsOf(back))
	require.Nil(t, back.PrevCursor, "back at the newest page")
	require.NotNil(t, back.NextCursor)

	window := list(func(in *eventop.ListInput) {
		in.Since = base.Add(2 * time.Minute).Format(time.RFC3339)
		in.Until = base.Add(5 * time.Minute).Format(time.RFC3339)
	})
	require.Equal(t, []uuid.UUID{ids[4], ids[3], ids[2]}, idsOf(window), "since inclusive, until exclusive")
	typed := list(func(in *eventop.ListInput) {
		in.Type = "c.d"
		in.Since = base.Add(2 * time.Minute).Format(time.RFC3339)
	})
	require.Equal(t, []uuid.UUID{ids[5], ids[3]}, idsOf(typed))
}
