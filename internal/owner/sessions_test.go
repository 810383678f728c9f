package owner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
)

func TestLoginOpensASessionAndRecordsOwnerLogin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	o := b.newOwner(t, "owner@example.com")

	res, err := b.login("OWNER@example.com", testPassword, "192.0.2.7")
	require.NoError(t, err)
	require.Equal(t, o.ID, res.Owner.ID)
	require.NotEmpty(t, res.Token)
	require.Equal(t, owner.DigestOf(res.Token), res.Session.TokenHash, "only the digest is kept")
	require.Equal(t, b.clock.Now().Add(14*24*time.Hour), res.ExpiresAt)

	evs := b.eventsOf(domain.EventOwnerLogin)
	require.Len(t, evs, 1)
	require.Equal(t, o.ID, evs[0].OwnerID)
	require.Equal(t, map[string]any{"owner_id": o.ID.String(), "session_id": res.Session.ID.String()}, dataOf(t, evs[0]),
		"thin: ids only, the client address stays inside")
	require.NotContains(t, string(evs[0].Data), testPassword)
	require.NotContains(t, string(evs[0].Data), res.Token)

	sess, err := b.svc.AuthenticateSession(ctx, res.Token)
	require.NoError(t, err)
	require.Equal(t, o.ID, sess.OwnerID)
}

func TestLoginRefusesBadCredentialsAlike(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, email, password string }{
		{"wrong password", "owner@example.com", "wrong password!"},
		{"unknown email", "nobody@example.com", testPassword},
		{"empty password", "owner@example.com", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.newOwner(t, "owner@example.com")
			_, err := b.login(c.email, c.password, "192.0.2.1")
			requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
			// The password was checked even for an unknown account (timing).
			require.Equal(t, 1, b.hasher.Verifies())
			require.Empty(t, b.eventsOf(domain.EventOwnerLogin))
		})
	}
}

func TestLoginLimitsFailuresPerIPAndPerAccount(t *testing.T) {
	t.Parallel()
	t.Run("per ip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.newOwner(t, "owner@example.com")
		lim := b.svc.Limits()
		for i := 0; i < lim.MaxFailuresPerIP; i++ {
			// Different accounts, so only the IP's limit can trip.
			_, err := b.login("someone"+string(rune('a'+i))+"@example.com", "wrong password!", "192.0.2.1")
			requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
		}
		verifies := b.hasher.Verifies()
		_, err := b.login("owner@example.com", testPassword, "192.0.2.1")
		requireCode(t, err, domain.KindRateLimited, owner.CodeRateLimited)
		require.Equal(t, verifies, b.hasher.Verifies(), "a limited attempt never reaches the password check")

		// Another IP is not limited.
		_, err = b.login("owner@example.com", testPassword, "192.0.2.2")
		require.NoError(t, err)

		// After the window the IP may try again.
		b.clock.Advance(lim.FailureWindow + time.Second)
		_, err = b.login("owner@example.com", testPassword, "192.0.2.1")
		require.NoError(t, err)
	})
	t.Run("per account and address", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.newOwner(t, "owner@example.com")
		lim := b.svc.Limits()
		for i := 0; i < lim.MaxFailuresPerAccountIP; i++ {
			_, err := b.login("owner@example.com", "wrong password!", "203.0.113.9")
			requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
		}
		_, err := b.login("Owner@Example.com", testPassword, "203.0.113.9")
		requireCode(t, err, domain.KindRateLimited, owner.CodeRateLimited)
		// The same address may still try other accounts (until its own limit).
		_, err = b.login("other@example.com", "wrong password!", "203.0.113.9")
		requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
		// The owner, from their own address, is not locked out.
		_, err = b.login("owner@example.com", testPassword, "192.0.2.7")
		require.NoError(t, err)
	})
	t.Run("a stranger cannot lock the owner out", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.newOwner(t, "owner@example.com")
		lim := b.svc.Limits()
		// Failures for the account from many addresses, each under its own
		// limits, for longer than a window.
		for round := 0; round < 2; round++ {
			for i := 0; i < 8; i++ {
				ip := fmt.Sprintf("198.51.100.%d", 10+i)
				for j := 0; j < lim.MaxFailuresPerAccountIP+1; j++ {
					_, err := b.login("owner@example.com", "wrong password!", ip)
					require.Error(t, err)
				}
			}
			_, err := b.login("owner@example.com", testPassword, "192.0.2.7")
			require.NoError(t, err, "round %d: the owner's sign-in from their own address", round)
			b.clock.Advance(lim.FailureWindow / 2)
		}
	})
}

func TestSessionsExpireAndLogOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "owner@example.com")
	first, err := b.login("owner@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	second, err := b.login("owner@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	require.NotEqual(t, first.Token, second.Token)

	require.NoError(t, b.svc.Logout(ctx, first.Token))
	_, err = b.svc.AuthenticateSession(ctx, first.Token)
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidSession)
	require.NoError(t, b.svc.Logout(ctx, first.Token), "logging out twice is fine")

	_, err = b.svc.AuthenticateSession(ctx, second.Token)
	require.NoError(t, err)
	b.clock.Advance(b.svc.Limits().SessionTTL)
	_, err = b.svc.AuthenticateSession(ctx, second.Token)
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidSession)

	_, err = b.svc.AuthenticateSession(ctx, "")
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidSession)
	_, err = b.svc.AuthenticateSession(ctx, "made-up")
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidSession)
}

func TestLoginRollsBackTheSessionWhenRecordFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newOwner(t, "owner@example.com")
	b.mem.Recorder().Fail(func(string) error { return errors.New("recorder down") })
	res, err := b.login("owner@example.com", testPassword, "192.0.2.1")
	require.Error(t, err)
	require.Empty(t, res.Token)
	b.mem.Recorder().Fail(nil)
	_, err = b.svc.AuthenticateSession(context.Background(), b.tokens.lastToken())
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidSession)
}
