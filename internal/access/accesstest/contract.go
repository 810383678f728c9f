package accesstest

import (
	"context"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/domain"
)

// Harness is one implementation of the access ports under test.
type Harness struct {
	UoW access.UnitOfWork
	// NewOwner returns the id of an owner rows may belong to.
	NewOwner func(t *testing.T) uuid.UUID
	// EventTypes returns the types of the owner's committed events, oldest
	// first.
	EventTypes func(t *testing.T, ownerID uuid.UUID) []string
}

// RunContract runs the contract every implementation of the access ports
// passes; newHarness returns a fresh implementation per subtest.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"roles: round trip, unique names, isolation, in use", contractRoles},
		{"codes: round trip, by hash, revoke, redeem, pages", contractCodes},
		{"embeds: round trip, scope reads the current code and role", contractEmbeds},
		{"requests: status, filters, pages, counts", contractRequests},
		{"events roll back with the work", contractRollback},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

func do(t *testing.T, h Harness, fn func(tx access.Tx) error) {
	t.Helper()
	if err := h.UoW.Do(context.Background(), fn); err != nil {
		t.Fatalf("unit of work: %v", err)
	}
}

func try(h Harness, fn func(tx access.Tx) error) error {
	return h.UoW.Do(context.Background(), fn)
}

func mustEqual(t *testing.T, want, got any, what string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s:\nwant %#v\n got %#v", what, want, got)
	}
}

func mustCode(t *testing.T, err error, code, what string) {
	t.Helper()
	de := domain.AsError(err)
	if de == nil || de.Code != code {
		t.Fatalf("%s: want domain error %s, got %v", what, code, err)
	}
}

// now is a time at the database's precision.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func id(t *testing.T) uuid.UUID {
	t.Helper()
	v, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func role(t *testing.T, h Harness, owner uuid.UUID, name string) access.Role {
	t.Helper()
	var out access.Role
	do(t, h, func(tx access.Tx) error {
		var err error
		n := now()
		out, err = tx.Roles().Insert(context.Background(), access.Role{ID: id(t), OwnerID: owner, Name: name,
			URIGlobs: []string{"wiki://*"}, PublishedOnly: true, CreatedAt: n, UpdatedAt: n})
		return err
	})
	return out
}

func code(t *testing.T, h Harness, owner, roleID uuid.UUID, value string, created time.Time) access.Code {
	t.Helper()
	sum := sha256.Sum256([]byte(value))
	var out access.Code
	do(t, h, func(tx access.Tx) error {
		var err error
		out, err = tx.Codes().Insert(context.Background(), access.Code{ID: id(t), OwnerID: owner, RoleID: roleID, Label: "l",
			Prefix: "smac_x", Hash: sum[:], DenyGlobs: []string{"wiki://private/*"}, CreatedAt: created})
		return err
	})
	return out
}

func contractRoles(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	r := role(t, h, owner, "friends")
	var got access.Role
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Roles().Get(ctx, owner, r.ID)
		return err
	})
	mustEqual(t, r, got, "role round trip")
	err := try(h, func(tx access.Tx) error {
		_, err := tx.Roles().Insert(ctx, access.Role{ID: id(t), OwnerID: owner, Name: "friends", URIGlobs: []string{"*"}, CreatedAt: now(), UpdatedAt: now()})
		return err
	})
	mustCode(t, err, "ROLE_NAME_TAKEN", "same name twice")
	role(t, h, other, "friends") // another owner may use the name
	err = try(h, func(tx access.Tx) error {
		_, err := tx.Roles().Get(ctx, other, r.ID)
		return err
	})
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another owner's role: %v", err)
	}
	b := role(t, h, owner, "acquaintances")
	var list []access.Role
	do(t, h, func(tx access.Tx) error {
		var err error
		list, err = tx.Roles().List(ctx, owner)
		return err
	})
	mustEqual(t, []uuid.UUID{b.ID, r.ID}, []uuid.UUID{list[0].ID, list[1].ID}, "roles by name")
	mustEqual(t, 2, len(list), "the owner's roles only")

	r.Name, r.URIGlobs, r.PublishedOnly, r.UpdatedAt = "close friends", []string{"wiki://a/*", "writing://*"}, false, now()
	var upd access.Role
	do(t, h, func(tx access.Tx) error {
		var err error
		upd, err = tx.Roles().Update(ctx, owner, r.ID, func(x *access.Role) error {
			x.Name, x.URIGlobs, x.PublishedOnly, x.UpdatedAt = r.Name, r.URIGlobs, r.PublishedOnly, r.UpdatedAt
			return nil
		})
		return err
	})
	mustEqual(t, r, upd, "updated role")
	rename := func(x *access.Role) error { x.Name = "close friends"; return nil }
	mustCode(t, try(h, func(tx access.Tx) error { _, err := tx.Roles().Update(ctx, owner, b.ID, rename); return err }), "ROLE_NAME_TAKEN", "rename onto a taken name")
	refused := errors.New("refused")
	if err := try(h, func(tx access.Tx) error {
		_, err := tx.Roles().Update(ctx, owner, b.ID, func(x *access.Role) error { x.Name = "not kept"; return refused })
		return err
	}); !errors.Is(err, refused) {
		t.Fatalf("update returns fn's error as is, got %v", err)
	}
	called := false
	if err := try(h, func(tx access.Tx) error {
		_, err := tx.Roles().Update(ctx, other, r.ID, func(*access.Role) error { called = true; return nil })
		return err
	}); !errors.Is(err, domain.ErrNotFound) || called {
		t.Fatalf("update of another owner's role: %v, fn called %v", err, called)
	}

	code(t, h, owner, r.ID, "smac_in_use", now())
	mustCode(t, try(h, func(tx access.Tx) error { return tx.Roles().Delete(ctx, owner, r.ID) }), "ROLE_IN_USE", "delete a role in use")
	if err := try(h, func(tx access.Tx) error { return tx.Roles().Delete(ctx, other, b.ID) }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("delete another owner's role: %v", err)
	}
	do(t, h, func(tx access.Tx) error { return tx.Roles().Delete(ctx, owner, b.ID) })
}

func contractCodes(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	r := role(t, h, owner, "r")
	base := now().Add(-time.Hour)
	exp := now().Add(time.Hour)
	reqID := uuid.New()
	sum := sha256.Sum256([]byte("smac_first"))
	want := access.Code{ID: id(t), OwnerID: owner, RoleID: r.ID, Label: "first", Prefix: "smac_f", Hash: sum[:],
		DenyGlobs: []string{"wiki://x/*"}, ExpiresAt: &exp, RequestID: &reqID, CreatedAt: base}
	var got access.Code
	do(t, h, func(tx access.Tx) error {
		var err error
		if _, err = tx.Codes().Insert(ctx, want); err != nil {
			return err
		}
		got, err = tx.Codes().Get(ctx, owner, want.ID)
		return err
	})
	mustEqual(t, want, got, "code round trip")
	otherRole := role(t, h, other, "o")
	if err := try(h, func(tx access.Tx) error {
		_, err := tx.Codes().Insert(ctx, access.Code{ID: id(t), OwnerID: owner, RoleID: otherRole.ID, Hash: []byte("h"), Prefix: "p", CreatedAt: now()})
		return err
	}); err == nil {
		t.Fatal("a code under another owner's role was stored")
	}
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Codes().GetByHash(ctx, sum[:])
		return err
	})
	mustEqual(t, want.ID, got.ID, "by hash")
	if err := try(h, func(tx access.Tx) error { _, err := tx.Codes().GetByHash(ctx, []byte("nope")); return err }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown hash: %v", err)
	}
	if err := try(h, func(tx access.Tx) error { _, err := tx.Codes().Get(ctx, other, want.ID); return err }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another owner's code: %v", err)
	}
	at := now()
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Codes().SetRevoked(ctx, owner, want.ID, at)
		return err
	})
	mustEqual(t, at, *got.RevokedAt, "revoked at")
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Codes().SetRevoked(ctx, owner, want.ID, at.Add(time.Minute))
		return err
	})
	mustEqual(t, at, *got.RevokedAt, "a second revoke keeps the first time")
	do(t, h, func(tx access.Tx) error {
		if _, err := tx.Codes().MarkRedeemed(ctx, want.ID, at); err != nil {
			return err
		}
		var err error
		got, err = tx.Codes().MarkRedeemed(ctx, want.ID, at.Add(time.Second))
		return err
	})
	mustEqual(t, 2, got.RedeemCount, "redeem count")
	mustEqual(t, at.Add(time.Second), *got.LastRedeemedAt, "last redeemed")

	for i := 1; i <= 4; i++ {
		code(t, h, owner, r.ID, "smac_page"+string(rune('0'+i)), base.Add(time.Duration(i)*time.Minute))
	}
	var page []access.Code
	do(t, h, func(tx access.Tx) error {
		var err error
		page, err = tx.Codes().List(ctx, owner, 2, nil)
		return err
	})
	mustEqual(t, 3, len(page), "limit+1 rows")
	if !page[0].CreatedAt.After(page[1].CreatedAt) {
		t.Fatal("codes not newest first")
	}
	var next []access.Code
	do(t, h, func(tx access.Tx) error {
		var err error
		next, err = tx.Codes().List(ctx, owner, 10, &access.Cursor{CreatedAt: page[1].CreatedAt, ID: page[1].ID})
		return err
	})
	mustEqual(t, 3, len(next), "the rest after the cursor")
	mustEqual(t, want.ID, next[2].ID, "oldest last")
}

func contractEmbeds(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	r := role(t, h, owner, "r")
	c := code(t, h, owner, r.ID, "smac_embed", now())
	e := access.Embed{ID: id(t), OwnerID: owner, CodeID: c.ID, Name: "blog", CreatedAt: now()}
	do(t, h, func(tx access.Tx) error { _, err := tx.Embeds().Insert(ctx, e); return err })
	var got access.Embed
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Embeds().Get(ctx, owner, e.ID)
		return err
	})
	mustEqual(t, e, got, "embed round trip")
	if err := try(h, func(tx access.Tx) error { _, err := tx.Embeds().Get(ctx, other, e.ID); return err }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another owner's embed: %v", err)
	}
	otherCode := code(t, h, other, role(t, h, other, "x").ID, "smac_other", now())
	if err := try(h, func(tx access.Tx) error {
		_, err := tx.Embeds().Insert(ctx, access.Embed{ID: id(t), OwnerID: owner, CodeID: otherCode.ID, Name: "x", CreatedAt: now()})
		return err
	}); err == nil {
		t.Fatal("an embed of another owner's code was stored")
	}
	// The scope reflects the role and code as they are now.
	r.URIGlobs, r.UpdatedAt = []string{"writing://*"}, now()
	at := now()
	do(t, h, func(tx access.Tx) error {
		if _, err := tx.Roles().Update(ctx, owner, r.ID, func(x *access.Role) error {
			x.URIGlobs, x.UpdatedAt = r.URIGlobs, r.UpdatedAt
			return nil
		}); err != nil {
			return err
		}
		_, err := tx.Codes().SetRevoked(ctx, owner, c.ID, at)
		return err
	})
	var sc access.EmbedScope
	do(t, h, func(tx access.Tx) error {
		var err error
		sc, err = tx.Embeds().Scope(ctx, e.ID)
		return err
	})
	mustEqual(t, e, sc.Embed, "scope embed")
	mustEqual(t, []string{"writing://*"}, sc.Role.URIGlobs, "scope role globs")
	mustEqual(t, []string{"wiki://private/*"}, sc.Code.DenyGlobs, "scope deny globs")
	mustEqual(t, at, *sc.Code.RevokedAt, "scope revoked")
	var list []access.Embed
	do(t, h, func(tx access.Tx) error {
		var err error
		list, err = tx.Embeds().List(ctx, owner)
		return err
	})
	mustEqual(t, []access.Embed{e}, list, "embeds of the owner")
	if err := try(h, func(tx access.Tx) error { return tx.Embeds().Delete(ctx, other, e.ID) }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("delete another owner's embed: %v", err)
	}
	do(t, h, func(tx access.Tx) error { return tx.Embeds().Delete(ctx, owner, e.ID) })
	if err := try(h, func(tx access.Tx) error { _, err := tx.Embeds().Scope(ctx, e.ID); return err }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("scope of a deleted embed: %v", err)
	}
}

func contractRequests(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	base := now().Add(-2 * time.Hour)
	var made []access.AccessRequest
	for i, key := range []string{"k1", "k1", "k2", "k1"} {
		r := access.AccessRequest{ID: id(t), OwnerID: owner, Name: "n", Email: "a@example.com", Message: "m",
			Status: access.RequestPending, ClientKey: key, CreatedAt: base.Add(time.Duration(i) * 30 * time.Minute)}
		r.UpdatedAt = r.CreatedAt
		do(t, h, func(tx access.Tx) error { _, err := tx.Requests().Insert(ctx, r); return err })
		made = append(made, r)
	}
	var got access.AccessRequest
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Requests().GetForUpdate(ctx, owner, made[0].ID)
		return err
	})
	mustEqual(t, made[0], got, "request round trip")
	if err := try(h, func(tx access.Tx) error { _, err := tx.Requests().GetForUpdate(ctx, other, made[0].ID); return err }); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another owner's request: %v", err)
	}
	count := func(key string, since time.Time) int {
		var n int
		do(t, h, func(tx access.Tx) error {
			var err error
			n, err = tx.Requests().CountSince(ctx, owner, key, since)
			return err
		})
		return n
	}
	mustEqual(t, 3, count("k1", base), "per client")
	mustEqual(t, 4, count("", base), "per owner")
	mustEqual(t, 1, count("k1", base.Add(45*time.Minute)), "within the window only")

	r := got
	codeID := uuid.New()
	r.Status, r.CodeID, r.UpdatedAt = access.RequestApproved, &codeID, now()
	do(t, h, func(tx access.Tx) error {
		var err error
		got, err = tx.Requests().SetStatus(ctx, r)
		return err
	})
	mustEqual(t, r, got, "status set")
	list := func(status access.RequestStatus, limit int, after *access.Cursor) []access.AccessRequest {
		var out []access.AccessRequest
		do(t, h, func(tx access.Tx) error {
			var err error
			out, err = tx.Requests().List(ctx, owner, status, limit, after)
			return err
		})
		return out
	}
	mustEqual(t, []access.AccessRequest{got}, list(access.RequestApproved, 10, nil), "by status")
	pending := list(access.RequestPending, 10, nil)
	mustEqual(t, []uuid.UUID{made[3].ID, made[2].ID, made[1].ID}, []uuid.UUID{pending[0].ID, pending[1].ID, pending[2].ID}, "newest first")
	first := list("", 2, nil)
	mustEqual(t, 3, len(first), "limit+1")
	rest := list("", 2, &access.Cursor{CreatedAt: first[1].CreatedAt, ID: first[1].ID})
	mustEqual(t, []uuid.UUID{made[1].ID, made[0].ID}, []uuid.UUID{rest[0].ID, rest[1].ID}, "after the cursor")
}

func contractRollback(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	do(t, h, func(tx access.Tx) error {
		_, err := tx.Recorder().Record(ctx, owner, domain.EventCodeIssued, "code/x", map[string]any{"code_id": "x"})
		return err
	})
	boom := errors.New("boom")
	err := try(h, func(tx access.Tx) error {
		n := now()
		if _, err := tx.Roles().Insert(ctx, access.Role{ID: id(t), OwnerID: owner, Name: "ghost", URIGlobs: []string{"*"}, CreatedAt: n, UpdatedAt: n}); err != nil {
			return err
		}
		if _, err := tx.Recorder().Record(ctx, owner, domain.EventCodeRevoked, "code/x", map[string]any{}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Do returned %v", err)
	}
	mustEqual(t, []string{domain.EventCodeIssued}, h.EventTypes(t, owner), "only the committed event")
	var roles []access.Role
	do(t, h, func(tx access.Tx) error {
		var err error
		roles, err = tx.Roles().List(ctx, owner)
		return err
	})
	mustEqual(t, 0, len(roles), "the role rolled back")
}
