package webhooktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// Harness is what the endpoint contract needs from an implementation.
type Harness struct {
	UoW webhook.UnitOfWork
	// NewOwner returns an owner the store accepts endpoints of.
	NewOwner func(t *testing.T) uuid.UUID
}

// RunEndpointContract runs the endpoint store's contract; newHarness returns
// a fresh implementation. The in-memory fake and the PostgreSQL adapter both
// pass it, so the fake the service's unit tests use cannot drift.
func RunEndpointContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, c := range endpointCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// t0 has microseconds only, as PostgreSQL keeps them.
var t0 = time.Date(2026, 9, 27, 12, 0, 0, 123456000, time.UTC)

func endpointOf(owner uuid.UUID, url string, types ...string) webhook.Endpoint {
	id := uuid.New()
	return webhook.Endpoint{ID: id, OwnerID: owner, URL: url, Description: "d " + url, EventTypes: types,
		Headers: map[string]string{"X-Tenant": "sealed"}, MaxInFlight: 2, TimeoutSeconds: 5, MaxAttempts: 7,
		Enabled: true, SecretSealed: append([]byte("secret-"), id[:]...), CreatedAt: t0, UpdatedAt: t0,
		CreatedBy: "api_key:" + id.String(), UpdatedBy: "api_key:" + id.String()}
}

// norm makes endpoints comparable across stores: times in UTC, no headers
// an empty map.
func norm(e webhook.Endpoint) webhook.Endpoint {
	utc := func(p *time.Time) *time.Time {
		if p == nil {
			return nil
		}
		u := p.UTC()
		return &u
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	e.FailingSince, e.PrevSecretUntil, e.DeletedAt = utc(e.FailingSince), utc(e.PrevSecretUntil), utc(e.DeletedAt)
	if e.Headers == nil {
		e.Headers = map[string]string{}
	} else {
		e.Headers = maps.Clone(e.Headers)
	}
	return e
}

func insert(t *testing.T, h Harness, es ...webhook.Endpoint) {
	t.Helper()
	require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
		for _, e := range es {
			if err := tx.Endpoints().Insert(context.Background(), e); err != nil {
				return err
			}
		}
		return nil
	}))
}

func get(h Harness, owner, id uuid.UUID) (webhook.Endpoint, error) {
	var e webhook.Endpoint
	err := h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
		var err error
		e, err = tx.Endpoints().Get(context.Background(), owner, id)
		return err
	})
	return norm(e), err
}

func update(h Harness, owner, id uuid.UUID, fn func(*webhook.Endpoint) error) error {
	return h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
		return tx.Endpoints().Update(context.Background(), owner, id, fn)
	})
}

func requireNotFound(t *testing.T, err error) {
	t.Helper()
	de := domain.AsError(err)
	require.NotNil(t, de, "want a domain error, got %v", err)
	require.Equal(t, domain.KindNotFound, de.Kind)
	require.Equal(t, webhook.CodeEndpointNotFound, de.Code)
}

func list(t *testing.T, h Harness, owner uuid.UUID, q webhook.EndpointQuery) []string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	var es []webhook.Endpoint
	require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
		var err error
		es, err = tx.Endpoints().List(context.Background(), owner, q)
		return err
	}))
	urls := []string{}
	for _, e := range es {
		urls = append(urls, e.URL)
	}
	return urls
}

var endpointCases = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"insert and get, per owner", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "booking.*")
		insert(t, h, e)
		got, err := get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, norm(e), got)
		_, err = get(h, other, e.ID)
		requireNotFound(t, err)
		_, err = get(h, owner, uuid.New())
		requireNotFound(t, err)
	}},
	{"a failed transaction stores nothing", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "*")
		boom := errors.New("boom")
		err := h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
			if err := tx.Endpoints().Insert(context.Background(), e); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		_, err = get(h, owner, e.ID)
		requireNotFound(t, err)
	}},
	{"count leaves out deleted endpoints and other owners", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		a, b := endpointOf(owner, "https://a.example", "*"), endpointOf(owner, "https://b.example", "*")
		insert(t, h, a, b, endpointOf(other, "https://c.example", "*"))
		count := func() int {
			var n int
			require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
				var err error
				n, err = tx.Endpoints().Count(context.Background(), owner)
				return err
			}))
			return n
		}
		require.Equal(t, 2, count())
		require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
			return tx.Endpoints().Delete(context.Background(), owner, a.ID, t0.Add(time.Minute))
		}))
		require.Equal(t, 1, count())
	}},
	{"update writes what fn leaves, never the id or owner", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "booking.*")
		insert(t, h, e)
		later := t0.Add(time.Hour)
		reason := "too many failures"
		want := e
		require.NoError(t, update(h, owner, e.ID, func(x *webhook.Endpoint) error {
			require.Equal(t, norm(e), norm(*x), "fn sees the stored endpoint")
			x.URL, x.Description, x.EventTypes = "https://b.example/h", "changed", []string{"code.*", "booking.created"}
			x.Headers = map[string]string{"X-Other": "v"}
			x.MaxInFlight, x.TimeoutSeconds, x.MaxAttempts = 4, 9, 3
			x.Enabled, x.DisabledReason, x.FailingSince = false, &reason, &later
			x.PrevSecretSealed, x.PrevSecretUntil, x.SecretSealed = x.SecretSealed, &later, []byte("new secret")
			x.UpdatedAt, x.UpdatedBy = later, "session:"+uuid.NewString()
			want = *x
			x.ID, x.OwnerID = uuid.New(), uuid.New()
			return nil
		}))
		got, err := get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, norm(want), got)
	}},
	{"an endpoint without its actors keeps none", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "corpus.*")
		e.CreatedBy, e.UpdatedBy = "", ""
		insert(t, h, e)
		got, err := get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, norm(e), got)
	}},
	{"signing keys and the filter are kept", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "corpus.*")
		e.Signing, e.PublicKey = webhook.SigningEd25519, "whpk_current"
		e.Filter = json.RawMessage(`{"data.op":{"$in":["created","deleted"]}}`)
		insert(t, h, e)
		got, err := get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, norm(e), got)
		want := e
		require.NoError(t, update(h, owner, e.ID, func(x *webhook.Endpoint) error {
			x.RotateSecret([]byte("next"), "whpk_next", t0.Add(time.Hour))
			x.Filter = nil
			want = *x
			return nil
		}))
		got, err = get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, norm(want), got)
		require.Equal(t, "whpk_current", got.PrevPublicKey)
	}},
	{"update returns fn's error as is and writes nothing", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "*")
		insert(t, h, e)
		refused := domain.Conflict("REFUSED", "no")
		err := update(h, owner, e.ID, func(x *webhook.Endpoint) error {
			x.URL = "https://changed.example"
			return refused
		})
		require.ErrorIs(t, err, refused)
		require.Equal(t, refused, domain.AsError(err))
		got, err := get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, norm(e), got)
	}},
	{"update of another owner's or a missing endpoint is not found", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "*")
		insert(t, h, e)
		called := false
		fn := func(*webhook.Endpoint) error { called = true; return nil }
		requireNotFound(t, update(h, other, e.ID, fn))
		requireNotFound(t, update(h, owner, uuid.New(), fn))
		require.False(t, called, "fn runs only on a found endpoint")
	}},
	{"a deleted endpoint is handed to fn but never written", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "*")
		insert(t, h, e)
		at := t0.Add(time.Minute)
		require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
			return tx.Endpoints().Delete(context.Background(), owner, e.ID, at)
		}))
		before, err := get(h, owner, e.ID)
		require.NoError(t, err)
		var seen *time.Time
		requireNotFound(t, update(h, owner, e.ID, func(x *webhook.Endpoint) error {
			seen = x.DeletedAt
			x.URL, x.Enabled = "https://changed.example", true
			return nil
		}))
		require.NotNil(t, seen)
		require.True(t, at.Equal(*seen))
		after, err := get(h, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, before, after)
	}},
	{"delete disables for good, once", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		e := endpointOf(owner, "https://a.example/h", "*")
		insert(t, h, e)
		at := t0.Add(time.Minute)
		del := func(o uuid.UUID) error {
			return h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
				return tx.Endpoints().Delete(context.Background(), o, e.ID, at)
			})
		}
		requireNotFound(t, del(other))
		require.NoError(t, del(owner))
		got, err := get(h, owner, e.ID)
		require.NoError(t, err, "a deleted endpoint stays readable")
		require.NotNil(t, got.DeletedAt)
		require.True(t, at.Equal(*got.DeletedAt))
		require.True(t, at.Equal(got.UpdatedAt))
		require.False(t, got.Enabled)
		require.NotNil(t, got.DisabledReason)
		require.Equal(t, webhook.StateDeleted, got.State())
		requireNotFound(t, del(owner))
	}},
	{"list filters, orders and pages", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		a := endpointOf(owner, "https://a.example/orders", "booking.*")
		b := endpointOf(owner, "https://b.example/ALL", "*")
		c := endpointOf(owner, "https://c.example/codes", "code.*")
		d := endpointOf(owner, "https://d.example/gone", "*")
		insert(t, h, a, b, c, d, endpointOf(other, "https://e.example", "*"))
		since := t0.Add(time.Minute)
		require.NoError(t, update(h, owner, b.ID, func(x *webhook.Endpoint) error { x.FailingSince = &since; return nil }))
		require.NoError(t, update(h, owner, c.ID, func(x *webhook.Endpoint) error { x.SetEnabled(false); return nil }))
		require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
			return tx.Endpoints().Delete(context.Background(), owner, d.ID, since)
		}))

		byID := []webhook.Endpoint{a, b, c}
		sort.Slice(byID, func(i, j int) bool { return bytes.Compare(byID[i].ID[:], byID[j].ID[:]) < 0 })
		urls := func(es ...webhook.Endpoint) []string {
			out := []string{}
			for _, e := range es {
				out = append(out, e.URL)
			}
			return out
		}
		require.Equal(t, urls(byID...), list(t, h, owner, webhook.EndpointQuery{}), "by id, deleted left out")
		require.Equal(t, urls(byID[2], byID[1], byID[0]), list(t, h, owner, webhook.EndpointQuery{Desc: true}))
		require.Equal(t, urls(byID[1], byID[2]), list(t, h, owner, webhook.EndpointQuery{After: &webhook.EndpointCursor{ID: byID[0].ID}}))
		require.Equal(t, urls(byID[0]), list(t, h, owner, webhook.EndpointQuery{Limit: 1}))
		require.Equal(t, urls(a, b, c), list(t, h, owner, webhook.EndpointQuery{Sort: webhook.SortURL}))
		require.Equal(t, urls(c, b, a), list(t, h, owner, webhook.EndpointQuery{Sort: webhook.SortURL, Desc: true}))
		require.Equal(t, urls(b, c), list(t, h, owner, webhook.EndpointQuery{Sort: webhook.SortURL, After: &webhook.EndpointCursor{URL: a.URL, ID: a.ID}}))
		require.Equal(t, urls(a), list(t, h, owner, webhook.EndpointQuery{State: webhook.StateEnabled}))
		require.Equal(t, urls(b), list(t, h, owner, webhook.EndpointQuery{State: webhook.StateFailing}))
		require.Equal(t, urls(c), list(t, h, owner, webhook.EndpointQuery{State: webhook.StateDisabled}))
		require.Equal(t, urls(d), list(t, h, owner, webhook.EndpointQuery{State: webhook.StateDeleted}))
		require.Equal(t, urls(a, b), list(t, h, owner, webhook.EndpointQuery{Sort: webhook.SortURL, EventType: "booking.created"}))
		require.Equal(t, urls(b), list(t, h, owner, webhook.EndpointQuery{URLContains: "b.example/all"}), "case-insensitive")
	}},
	{"latest deliveries of events, per owner", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		a, b := endpointOf(owner, "https://a.example/h", "*"), endpointOf(owner, "https://b.example/h", "*")
		x := endpointOf(other, "https://x.example/h", "*")
		insert(t, h, a, b, x)
		ev1, ev2, evX := uuid.New(), uuid.New(), uuid.New()
		enqueue := func(ep, ev uuid.UUID) int64 {
			var id int64
			require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
				var err error
				id, err = tx.Deliveries().Enqueue(context.Background(), ep, ev)
				return err
			}))
			return id
		}
		jb, ja, jx := enqueue(b.ID, ev1), enqueue(a.ID, ev1), enqueue(x.ID, evX)
		jx1 := enqueue(x.ID, ev1)
		require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
			return tx.Endpoints().Delete(context.Background(), owner, b.ID, t0)
		}))
		latest := func(o uuid.UUID, ids ...uuid.UUID) []string {
			var ds []webhook.EventDelivery
			require.NoError(t, h.UoW.Do(context.Background(), func(tx webhook.Tx) error {
				var err error
				ds, err = tx.Deliveries().LatestByEvents(context.Background(), o, ids)
				return err
			}))
			out := []string{}
			for _, d := range ds {
				out = append(out, fmt.Sprintf("%s %d %s %s %s %d/%d %t", d.EventID, d.JobID, d.EndpointURL, d.EndpointState,
					d.State, d.Attempt, d.MaxAttempts, d.FailedBefore))
			}
			return out
		}
		row := func(ev uuid.UUID, job int64, e webhook.Endpoint, state string) string {
			return fmt.Sprintf("%s %d %s %s available 0/7 false", ev, job, e.URL, state)
		}
		require.Equal(t, []string{row(ev1, jb, b, webhook.StateDeleted), row(ev1, ja, a, webhook.StateEnabled)},
			latest(owner, ev2, ev1, evX), "the owner's endpoints only, deleted ones included, by job")
		require.Equal(t, []string{row(evX, jx, x, webhook.StateEnabled), row(ev1, jx1, x, webhook.StateEnabled)},
			latest(other, evX, ev1), "in the events' order")
		require.Empty(t, latest(owner, evX, ev2))
		require.Empty(t, latest(owner))
	}},
}
