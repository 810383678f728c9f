package ownertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// Recorded is an event as the contract compares it.
type Recorded struct {
	OwnerID uuid.UUID
	Type    string
	Subject string
}

// Harness is one implementation of owner.UnitOfWork with a way to read what
// it committed.
type Harness struct {
	UoW owner.UnitOfWork
	// Events returns every committed event, oldest first.
	Events func(t *testing.T) []Recorded
	// Delivered returns the recovery messages delivered after commit.
	Delivered func() []owner.RecoveryMessage
}

// RunContract runs the owner stores' contract; newHarness returns a fresh,
// empty implementation. The in-memory fake and the PostgreSQL adapter both
// pass it, so the fake the domain's unit tests use cannot drift.
func RunContract(t *testing.T, newHarness func(*testing.T) Harness) {
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

// do runs fn in a committed transaction, failing the test on error.
func do(t *testing.T, h Harness, fn func(tx owner.Tx) error) {
	t.Helper()
	require.NoError(t, h.UoW.Do(context.Background(), fn))
}

func mkOwner(t *testing.T, h Harness, email string, at time.Time) owner.Owner {
	t.Helper()
	o := owner.Owner{ID: uuid.Must(uuid.NewV7()), Email: email, PasswordHash: "hash-of-" + email, CreatedAt: at, UpdatedAt: at}
	do(t, h, func(tx owner.Tx) error { return tx.Owners().Create(context.Background(), o) })
	return o
}

var contractCases = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"owners", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "Alice@Example.com", t0)
		b := mkOwner(t, h, "bob@example.com", t0.Add(time.Second))
		err := h.UoW.Do(ctx, func(tx owner.Tx) error {
			return tx.Owners().Create(ctx, owner.Owner{ID: uuid.New(), Email: "alice@EXAMPLE.com", PasswordHash: "x", CreatedAt: t0, UpdatedAt: t0})
		})
		require.ErrorIs(t, err, owner.ErrEmailTaken)
		require.Equal(t, domain.KindConflict, domain.AsError(err).Kind)

		do(t, h, func(tx owner.Tx) error {
			got, err := tx.Owners().ByEmail(ctx, "ALICE@example.COM")
			require.NoError(t, err)
			require.Equal(t, a, got, "values round-trip exactly")
			got, err = tx.Owners().ByID(ctx, b.ID)
			require.NoError(t, err)
			require.Equal(t, b, got)
			_, err = tx.Owners().ByID(ctx, uuid.New())
			require.ErrorIs(t, err, domain.ErrNotFound)
			_, err = tx.Owners().ByEmail(ctx, "carol@example.com")
			require.ErrorIs(t, err, domain.ErrNotFound)
			oldest, err := tx.Owners().Oldest(ctx)
			require.NoError(t, err)
			require.Equal(t, a.ID, oldest.ID)
			n, err := tx.Owners().Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			return nil
		})
		// A failed statement ends the use case: its error rolls back.
		err = h.UoW.Do(ctx, func(tx owner.Tx) error {
			return tx.Owners().UpdateEmail(ctx, b.ID, "ALICE@example.com", t0)
		})
		require.ErrorIs(t, err, owner.ErrEmailTaken)
		do(t, h, func(tx owner.Tx) error {
			require.NoError(t, tx.Owners().UpdateEmail(ctx, b.ID, "Bob@Example.com", t0.Add(time.Hour)))
			require.NoError(t, tx.Owners().UpdatePassword(ctx, a.ID, "new-hash", t0.Add(time.Hour)))
			require.ErrorIs(t, tx.Owners().UpdatePassword(ctx, uuid.New(), "h", t0), domain.ErrNotFound)
			require.ErrorIs(t, tx.Owners().UpdateEmail(ctx, uuid.New(), "z@example.com", t0), domain.ErrNotFound)
			require.ErrorIs(t, tx.Owners().SetOperator(ctx, uuid.New(), true, t0), domain.ErrNotFound)
			return nil
		})
		do(t, h, func(tx owner.Tx) error {
			got, err := tx.Owners().ByID(ctx, a.ID)
			require.NoError(t, err)
			require.False(t, got.Operator, "no owner is the operator until made one")
			require.NoError(t, tx.Owners().SetOperator(ctx, a.ID, true, t0.Add(time.Hour)))
			got, err = tx.Owners().ByEmail(ctx, got.Email)
			require.NoError(t, err)
			require.True(t, got.Operator)
			other, err := tx.Owners().ByID(ctx, b.ID)
			require.NoError(t, err)
			require.False(t, other.Operator)
			require.NoError(t, tx.Owners().SetOperator(ctx, a.ID, false, t0.Add(time.Hour)))
			got, err = tx.Owners().ByID(ctx, a.ID)
			require.NoError(t, err)
			require.False(t, got.Operator)
			return nil
		})
		do(t, h, func(tx owner.Tx) error {
			got, err := tx.Owners().ByID(ctx, b.ID)
			require.NoError(t, err)
			require.Equal(t, "Bob@Example.com", got.Email)
			require.Equal(t, t0.Add(time.Hour), got.UpdatedAt)
			got, err = tx.Owners().ByID(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, "new-hash", got.PasswordHash)
			return nil
		})
	}},
	{"no owners", func(t *testing.T, h Harness) {
		do(t, h, func(tx owner.Tx) error {
			_, err := tx.Owners().Oldest(context.Background())
			require.ErrorIs(t, err, domain.ErrNotFound)
			n, err := tx.Owners().Count(context.Background())
			require.NoError(t, err)
			require.Zero(t, n)
			return nil
		})
	}},
	{"commit and rollback", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		abort := errors.New("abort")
		msg := owner.RecoveryMessage{OwnerID: a.ID, Email: a.Email, Token: "tok", ExpiresAt: t0}
		err := h.UoW.Do(ctx, func(tx owner.Tx) error {
			require.NoError(t, tx.Owners().UpdatePassword(ctx, a.ID, "rolled-back", t0))
			_, err := tx.Recorder().Record(ctx, a.ID, domain.EventOwnerLogin, "owner/x", map[string]any{})
			require.NoError(t, err)
			require.NoError(t, tx.Outbox().Enqueue(ctx, msg))
			return abort
		})
		require.ErrorIs(t, err, abort, "fn's error comes back as is")
		require.Empty(t, h.Events(t))
		require.Empty(t, h.Delivered())

		var leaked owner.Tx
		do(t, h, func(tx owner.Tx) error {
			leaked = tx
			got, err := tx.Owners().ByID(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, a.PasswordHash, got.PasswordHash)
			_, err = tx.Recorder().Record(ctx, a.ID, domain.EventOwnerLogin, "owner/x", map[string]any{"k": 1})
			require.NoError(t, err)
			_, err = tx.Recorder().Record(ctx, a.ID, "owner.exploded", "owner/x", map[string]any{})
			require.Error(t, err, "undeclared types are refused")
			return tx.Outbox().Enqueue(ctx, msg)
		})
		require.Equal(t, []Recorded{{a.ID, domain.EventOwnerLogin, "owner/x"}}, h.Events(t))
		require.Equal(t, []owner.RecoveryMessage{msg}, h.Delivered())

		// A Tx used after its transaction ended refuses.
		_, err = leaked.Recorder().Record(ctx, a.ID, domain.EventOwnerLogin, "owner/x", map[string]any{})
		require.Error(t, err)
		require.Error(t, leaked.Outbox().Enqueue(ctx, msg))
		_, err = leaked.Owners().Count(ctx)
		require.Error(t, err)
		require.Len(t, h.Events(t), 1)
	}},
	{"sessions", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		b := mkOwner(t, h, "b@example.com", t0)
		mk := func(o owner.Owner, token string, expires time.Time) owner.Session {
			return owner.Session{ID: uuid.Must(uuid.NewV7()), OwnerID: o.ID, TokenHash: owner.DigestOf(token), CreatedAt: t0, ExpiresAt: expires, IP: "192.0.2.1", UserAgent: "ua"}
		}
		s1, s2, s3 := mk(a, "one", t0.Add(time.Hour)), mk(a, "two", t0.Add(2*time.Hour)), mk(b, "three", t0.Add(2*time.Hour))
		do(t, h, func(tx owner.Tx) error {
			for _, s := range []owner.Session{s1, s2, s3} {
				require.NoError(t, tx.Sessions().Create(ctx, s))
			}
			got, err := tx.Sessions().ByTokenHash(ctx, owner.DigestOf("one"))
			require.NoError(t, err)
			require.Equal(t, s1, got)
			_, err = tx.Sessions().ByTokenHash(ctx, owner.DigestOf("nope"))
			require.ErrorIs(t, err, domain.ErrNotFound)

			// The owner's live sessions, newest first; another owner's
			// session is not the owner's to list or end.
			s4 := mk(a, "four", t0.Add(3*time.Hour))
			s4.CreatedAt = t0.Add(time.Minute)
			require.NoError(t, tx.Sessions().Create(ctx, s4))
			live, err := tx.Sessions().ListForOwner(ctx, a.ID, t0.Add(time.Hour))
			require.NoError(t, err)
			require.Equal(t, []owner.Session{s4, s2}, live, "s1 expires at now: not listed")
			require.ErrorIs(t, tx.Sessions().DeleteOne(ctx, b.ID, s4.ID), domain.ErrNotFound)
			require.NoError(t, tx.Sessions().DeleteOne(ctx, a.ID, s4.ID))
			require.ErrorIs(t, tx.Sessions().DeleteOne(ctx, a.ID, s4.ID), domain.ErrNotFound)
			_, err = tx.Sessions().ByTokenHash(ctx, owner.DigestOf("four"))
			require.ErrorIs(t, err, domain.ErrNotFound)

			// Expiry is inclusive: a session expiring at now is gone.
			require.NoError(t, tx.Sessions().DeleteExpired(ctx, t0.Add(time.Hour)))
			_, err = tx.Sessions().ByTokenHash(ctx, owner.DigestOf("one"))
			require.ErrorIs(t, err, domain.ErrNotFound)
			_, err = tx.Sessions().ByTokenHash(ctx, owner.DigestOf("two"))
			require.NoError(t, err)

			require.NoError(t, tx.Sessions().DeleteForOwner(ctx, a.ID))
			_, err = tx.Sessions().ByTokenHash(ctx, owner.DigestOf("two"))
			require.ErrorIs(t, err, domain.ErrNotFound)
			require.NoError(t, tx.Sessions().DeleteByTokenHash(ctx, owner.DigestOf("three")))
			require.NoError(t, tx.Sessions().DeleteByTokenHash(ctx, owner.DigestOf("three")))
			_, err = tx.Sessions().ByTokenHash(ctx, owner.DigestOf("three"))
			require.ErrorIs(t, err, domain.ErrNotFound)
			return nil
		})
	}},
	{"api keys", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		b := mkOwner(t, h, "b@example.com", t0)
		mk := func(o owner.Owner, key string, at time.Time) owner.APIKey {
			return owner.APIKey{ID: uuid.Must(uuid.NewV7()), OwnerID: o.ID, Name: "n-" + key, Prefix: key[:3], KeyHash: owner.DigestOf(key), CreatedAt: at}
		}
		k1, k2, k3 := mk(a, "smk_one", t0), mk(a, "smk_two", t0.Add(time.Minute)), mk(b, "smk_three", t0)
		do(t, h, func(tx owner.Tx) error {
			for _, k := range []owner.APIKey{k1, k2, k3} {
				require.NoError(t, tx.APIKeys().Create(ctx, k))
			}
			return nil
		})
		do(t, h, func(tx owner.Tx) error {
			got, err := tx.APIKeys().ByHash(ctx, owner.DigestOf("smk_two"))
			require.NoError(t, err)
			require.Equal(t, k2, got)
			_, err = tx.APIKeys().ByHash(ctx, owner.DigestOf("smk_none"))
			require.ErrorIs(t, err, domain.ErrNotFound)
			got, err = tx.APIKeys().Get(ctx, a.ID, k1.ID)
			require.NoError(t, err)
			require.Equal(t, k1, got)
			_, err = tx.APIKeys().Get(ctx, b.ID, k1.ID)
			require.ErrorIs(t, err, domain.ErrNotFound, "another owner's key is not found")

			list, err := tx.APIKeys().List(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, []owner.APIKey{k2, k1}, list, "newest first")
			none, err := tx.APIKeys().List(ctx, uuid.New())
			require.NoError(t, err)
			require.NotNil(t, none)
			require.Empty(t, none)

			require.ErrorIs(t, tx.APIKeys().Revoke(ctx, b.ID, k1.ID, t0), domain.ErrNotFound)
			require.NoError(t, tx.APIKeys().Revoke(ctx, a.ID, k1.ID, t0.Add(time.Hour)))
			require.NoError(t, tx.APIKeys().Revoke(ctx, a.ID, k1.ID, t0.Add(2*time.Hour)))
			got, err = tx.APIKeys().Get(ctx, a.ID, k1.ID)
			require.NoError(t, err)
			require.Equal(t, t0.Add(time.Hour), *got.RevokedAt, "the first revocation stands")

			// Touch writes when unset or not after notBefore.
			require.NoError(t, tx.APIKeys().Touch(ctx, k2.ID, t0.Add(time.Minute), t0))
			require.NoError(t, tx.APIKeys().Touch(ctx, k2.ID, t0.Add(90*time.Second), t0.Add(30*time.Second)))
			got, err = tx.APIKeys().Get(ctx, a.ID, k2.ID)
			require.NoError(t, err)
			require.Equal(t, t0.Add(time.Minute), *got.LastUsedAt)
			require.NoError(t, tx.APIKeys().Touch(ctx, k2.ID, t0.Add(2*time.Minute), t0.Add(time.Minute)))
			got, err = tx.APIKeys().Get(ctx, a.ID, k2.ID)
			require.NoError(t, err)
			require.Equal(t, t0.Add(2*time.Minute), *got.LastUsedAt)
			return nil
		})
	}},
	{"api key scopes", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		mk := func(key string, at time.Time, scopes op.Scopes) owner.APIKey {
			return owner.APIKey{ID: uuid.Must(uuid.NewV7()), OwnerID: a.ID, Name: "n-" + key, Prefix: key[:3], KeyHash: owner.DigestOf(key), CreatedAt: at, Scopes: scopes}
		}
		full := mk("smk_full", t0, nil)
		one := mk("smk_one", t0.Add(time.Minute), op.Scopes{op.ScopePublish})
		every := mk("smk_every", t0.Add(2*time.Minute), op.Scopes{op.ScopeRead, op.ScopePublish, op.ScopeWebhooks, op.ScopeInbound, op.ScopeNotes})
		do(t, h, func(tx owner.Tx) error {
			for _, k := range []owner.APIKey{full, one, every} {
				require.NoError(t, tx.APIKeys().Create(ctx, k))
			}
			return nil
		})
		do(t, h, func(tx owner.Tx) error {
			for _, want := range []owner.APIKey{full, one, every} {
				got, err := tx.APIKeys().ByHash(ctx, want.KeyHash)
				require.NoError(t, err)
				require.Equal(t, want.Scopes, got.Scopes, "%s by hash", want.Name)
				got, err = tx.APIKeys().Get(ctx, a.ID, want.ID)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s by id", want.Name)
			}
			got, err := tx.APIKeys().Get(ctx, a.ID, full.ID)
			require.NoError(t, err)
			require.Nil(t, got.Scopes, "a full key reads back as nil scopes, never as an empty list")
			list, err := tx.APIKeys().List(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, []owner.APIKey{every, one, full}, list, "the list carries every key's scopes")
			return nil
		})
	}},
	{"attempts", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		b := mkOwner(t, h, "b@example.com", t0)
		fail := owner.AttemptLoginFailure
		do(t, h, func(tx owner.Tx) error {
			adds := []owner.Attempt{
				{Kind: fail, IP: "ip1", Email: "a@example.com", OwnerID: &a.ID, At: t0},
				{Kind: fail, IP: "ip1", Email: "b@example.com", OwnerID: &b.ID, At: t0.Add(time.Minute)},
				{Kind: fail, IP: "ip1", Email: "x@example.com", At: t0.Add(2 * time.Minute)},
				{Kind: fail, IP: "ip2", Email: "a@example.com", OwnerID: &a.ID, At: t0.Add(2 * time.Minute)},
				{Kind: owner.AttemptRecovery, IP: "ip1", Email: "a@example.com", OwnerID: &a.ID, At: t0},
			}
			for _, x := range adds {
				require.NoError(t, tx.Attempts().Add(ctx, x))
			}
			return nil
		})
		do(t, h, func(tx owner.Tx) error {
			n, err := tx.Attempts().CountByIP(ctx, fail, "ip1", t0)
			require.NoError(t, err)
			require.Equal(t, 3, n, "since is inclusive")
			n, err = tx.Attempts().CountByIP(ctx, fail, "ip1", t0.Add(time.Second))
			require.NoError(t, err)
			require.Equal(t, 2, n)
			n, err = tx.Attempts().CountByEmail(ctx, fail, "a@example.com", t0)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			n, err = tx.Attempts().CountByEmail(ctx, owner.AttemptRecovery, "a@example.com", t0)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			n, err = tx.Attempts().CountByEmailAndIP(ctx, fail, "a@example.com", "ip1", t0)
			require.NoError(t, err)
			require.Equal(t, 1, n, "ip2's failure for the account is ip2's")
			n, err = tx.Attempts().CountByEmailAndIP(ctx, fail, "a@example.com", "ip2", t0.Add(time.Minute))
			require.NoError(t, err)
			require.Equal(t, 1, n)
			n, err = tx.Attempts().CountByEmailAndIP(ctx, fail, "a@example.com", "ip3", t0)
			require.NoError(t, err)
			require.Equal(t, 0, n)

			ids, err := tx.Attempts().TargetedOwners(ctx, fail, "ip1", t0)
			require.NoError(t, err)
			want := []uuid.UUID{a.ID, b.ID}
			if strings.Compare(a.ID.String(), b.ID.String()) > 0 {
				want = []uuid.UUID{b.ID, a.ID}
			}
			require.Equal(t, want, ids, "distinct, in id order")
			ids, err = tx.Attempts().TargetedOwners(ctx, fail, "ip3", t0)
			require.NoError(t, err)
			require.Empty(t, ids)

			require.NoError(t, tx.Attempts().DeleteByIP(ctx, fail, "ip1"))
			n, err = tx.Attempts().CountByIP(ctx, fail, "ip1", t0)
			require.NoError(t, err)
			require.Zero(t, n)
			n, err = tx.Attempts().CountByIP(ctx, owner.AttemptRecovery, "ip1", t0)
			require.NoError(t, err)
			require.Equal(t, 1, n, "only the kind named goes")

			require.NoError(t, tx.Attempts().DeleteBefore(ctx, t0.Add(2*time.Minute)))
			n, err = tx.Attempts().CountByIP(ctx, owner.AttemptRecovery, "ip1", t0)
			require.NoError(t, err)
			require.Zero(t, n)
			n, err = tx.Attempts().CountByIP(ctx, fail, "ip2", t0)
			require.NoError(t, err)
			require.Equal(t, 1, n, "DeleteBefore is exclusive")
			return nil
		})
	}},
	{"bans", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		b := mkOwner(t, h, "b@example.com", t0)
		mk := func(o owner.Owner, ip string, at time.Time) owner.IPBan {
			return owner.IPBan{ID: uuid.Must(uuid.NewV7()), OwnerID: o.ID, IP: ip, Reason: "r", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
		}
		var bans []owner.IPBan
		do(t, h, func(tx owner.Tx) error {
			for i := 0; i < 5; i++ {
				x := mk(a, fmt.Sprintf("203.0.113.%d", i), t0.Add(time.Duration(i)*time.Second))
				ok, err := tx.Bans().Add(ctx, x)
				require.NoError(t, err)
				require.True(t, ok)
				bans = append([]owner.IPBan{x}, bans...)
			}
			ok, err := tx.Bans().Add(ctx, mk(a, "203.0.113.0", t0.Add(time.Minute)))
			require.NoError(t, err)
			require.False(t, ok, "one open ban per owner and IP")
			ok, err = tx.Bans().Add(ctx, mk(b, "203.0.113.0", t0))
			require.NoError(t, err)
			require.True(t, ok, "another owner may ban the same IP")
			return nil
		})
		do(t, h, func(tx owner.Tx) error {
			ips, err := tx.Bans().ActiveIPs(ctx, t0.Add(10*time.Second))
			require.NoError(t, err)
			require.Equal(t, []string{"203.0.113.0", "203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"}, ips)

			// Paging newest first with a cursor.
			page1, err := tx.Bans().ListActive(ctx, a.ID, t0.Add(10*time.Second), nil, 2)
			require.NoError(t, err)
			require.Equal(t, bans[:2], page1)
			last := page1[1]
			page2, err := tx.Bans().ListActive(ctx, a.ID, t0.Add(10*time.Second), &owner.BanCursor{CreatedAt: last.CreatedAt, ID: last.ID}, 10)
			require.NoError(t, err)
			require.Equal(t, bans[2:], page2)
			other, err := tx.Bans().ListActive(ctx, b.ID, t0.Add(10*time.Second), nil, 10)
			require.NoError(t, err)
			require.Len(t, other, 1)

			require.ErrorIs(t, tx.Bans().Lift(ctx, b.ID, bans[0].ID, t0.Add(10*time.Second)), domain.ErrNotFound)
			require.NoError(t, tx.Bans().Lift(ctx, a.ID, bans[0].ID, t0.Add(10*time.Second)))
			require.ErrorIs(t, tx.Bans().Lift(ctx, a.ID, bans[0].ID, t0.Add(11*time.Second)), domain.ErrNotFound)
			ips, err = tx.Bans().ActiveIPs(ctx, t0.Add(10*time.Second))
			require.NoError(t, err)
			require.NotContains(t, ips, bans[0].IP)

			// Expired bans are inactive, cannot be lifted, and make room.
			ips, err = tx.Bans().ActiveIPs(ctx, t0.Add(2*time.Hour))
			require.NoError(t, err)
			require.Empty(t, ips)
			require.ErrorIs(t, tx.Bans().Lift(ctx, a.ID, bans[1].ID, t0.Add(2*time.Hour)), domain.ErrNotFound)
			ok, err := tx.Bans().Add(ctx, mk(a, bans[1].IP, t0.Add(2*time.Hour)))
			require.NoError(t, err)
			require.True(t, ok)
			active, err := tx.Bans().ListActive(ctx, a.ID, t0.Add(2*time.Hour), nil, 10)
			require.NoError(t, err)
			require.Len(t, active, 1)
			return nil
		})
	}},
	{"recovery tokens", func(t *testing.T, h Harness) {
		ctx := context.Background()
		a := mkOwner(t, h, "a@example.com", t0)
		rt := owner.RecoveryToken{ID: uuid.Must(uuid.NewV7()), OwnerID: a.ID, TokenHash: owner.DigestOf("r1"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		old := owner.RecoveryToken{ID: uuid.Must(uuid.NewV7()), OwnerID: a.ID, TokenHash: owner.DigestOf("r2"), CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}
		do(t, h, func(tx owner.Tx) error {
			require.NoError(t, tx.Recovery().Create(ctx, rt))
			return tx.Recovery().Create(ctx, old)
		})
		do(t, h, func(tx owner.Tx) error {
			got, err := tx.Recovery().Consume(ctx, owner.DigestOf("r1"), t0.Add(time.Minute))
			require.NoError(t, err)
			used := t0.Add(time.Minute)
			want := rt
			want.UsedAt = &used
			require.Equal(t, want, got)
			_, err = tx.Recovery().Consume(ctx, owner.DigestOf("r1"), t0.Add(time.Minute))
			require.ErrorIs(t, err, domain.ErrNotFound, "single use")
			_, err = tx.Recovery().Consume(ctx, owner.DigestOf("r2"), t0.Add(time.Minute))
			require.ErrorIs(t, err, domain.ErrNotFound, "expiry is exclusive")
			_, err = tx.Recovery().Consume(ctx, owner.DigestOf("r3"), t0)
			require.ErrorIs(t, err, domain.ErrNotFound)
			return nil
		})
	}},
	{"the whole domain", func(t *testing.T, h Harness) {
		// The use cases end to end on this implementation.
		ctx := context.Background()
		clock := &stepClock{now: t0}
		svc, err := owner.New(owner.Deps{UoW: h.UoW, Clock: clock, Hasher: plainHasher{}, Tokens: &countingTokens{}})
		require.NoError(t, err)
		a, err := svc.CreateOwner(ctx, "a@example.com", "correct horse battery")
		require.NoError(t, err)
		res, err := svc.Login(ctx, owner.LoginInput{Email: "A@example.com", Password: "correct horse battery", IP: "192.0.2.1"})
		require.NoError(t, err)
		_, err = svc.AuthenticateSession(ctx, res.Token)
		require.NoError(t, err)
		k, err := svc.IssueAPIKey(ctx, a.ID, "ci")
		require.NoError(t, err)
		got, err := svc.AuthenticateAPIKey(ctx, k.Key)
		require.NoError(t, err)
		require.Equal(t, a.ID, got.OwnerID)
		require.NoError(t, svc.RevokeAPIKey(ctx, a.ID, k.ID))
		lim := svc.Limits()
		for i := 0; i < lim.BanAfter; i++ {
			_, err := svc.Login(ctx, owner.LoginInput{Email: "a@example.com", Password: "wrong password!", IP: "203.0.113.9"})
			require.Error(t, err)
		}
		banned, err := svc.IsBanned(ctx, "203.0.113.9")
		require.NoError(t, err)
		require.True(t, banned)
		page, err := svc.ListBans(ctx, a.ID, op.PageInput{})
		require.NoError(t, err)
		require.Len(t, page.Data, 1)
		require.NoError(t, svc.RequestRecovery(ctx, "a@example.com", "192.0.2.1"))
		require.Len(t, h.Delivered(), 1)
		_, err = svc.CompleteRecovery(ctx, h.Delivered()[0].Token, "another good passphrase")
		require.NoError(t, err)
		_, err = svc.RequestUpgrade(ctx, a.ID, "")
		require.NoError(t, err)
		_, err = svc.ChangeEmail(ctx, a.ID, "new@example.com", "another good passphrase")
		require.NoError(t, err)

		var types []string
		for _, e := range h.Events(t) {
			require.Equal(t, a.ID, e.OwnerID)
			types = append(types, e.Type)
		}
		require.Equal(t, []string{
			domain.EventOwnerLogin, domain.EventAPIKeyIssued, domain.EventAPIKeyRevoked, domain.EventIPBanAdded,
			domain.EventOwnerRecoveryRequested, domain.EventInstanceUpgradeRequested, domain.EventOwnerEmailChanged,
		}, types)
	}},
}

type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// plainHasher is a transparent stand-in for argon2id (fast tests).
type plainHasher struct{}

func (plainHasher) Hash(pw string) (string, error)       { return "plain$" + pw, nil }
func (plainHasher) Verify(pw, hash string) (bool, error) { return hash == "plain$"+pw, nil }

type countingTokens struct {
	mu sync.Mutex
	n  int
}

func (c *countingTokens) Token(n int) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	s := fmt.Sprintf("t%d_", c.n)
	return s + strings.Repeat("x", max(0, n-len(s))), nil
}
