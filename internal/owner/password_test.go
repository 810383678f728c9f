package owner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
)

func TestChangePassword(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	b.newOwner(t, "b@example.com")
	sess, err := b.login("a@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	otherSess, err := b.login("b@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	const newPassword = "a much newer passphrase"

	cases := []struct {
		name, current, next string
		kind                domain.Kind
		code                string
	}{
		{"wrong current password", "wrong password!!", newPassword, domain.KindForbidden, owner.CodeWrongPassword},
		{"weak new password", testPassword, "short", domain.KindValidation, owner.CodeWeakPassword},
	}
	for _, c := range cases {
		err := b.svc.ChangePassword(ctx, a.ID, c.current, c.next)
		requireCode(t, err, c.kind, c.code)
	}
	_, err = b.svc.AuthenticateSession(ctx, sess.Token)
	require.NoError(t, err, "a refused change ends no session")

	require.NoError(t, b.svc.ChangePassword(ctx, a.ID, testPassword, newPassword))

	_, err = b.svc.AuthenticateSession(ctx, sess.Token)
	require.Error(t, err, "the change ends the owner's sessions")
	_, err = b.svc.AuthenticateSession(ctx, otherSess.Token)
	require.NoError(t, err, "another owner's session stays")
	_, err = b.login("a@example.com", testPassword, "192.0.2.2")
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
	_, err = b.login("a@example.com", newPassword, "192.0.2.2")
	require.NoError(t, err)
}

// ResetPassword (the operator's CLI) sets the password without the current
// one and ends every session of that owner only; an unknown email or a
// weak password changes nothing.
func TestResetPassword(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	b.newOwner(t, "b@example.com")
	sess, err := b.login("a@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	otherSess, err := b.login("b@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	const newPassword = "a reset passphrase, long enough"

	_, err = b.svc.ResetPassword(ctx, "nobody@example.com", newPassword)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = b.svc.ResetPassword(ctx, "a@example.com", "short")
	requireCode(t, err, domain.KindValidation, owner.CodeWeakPassword)
	_, err = b.svc.AuthenticateSession(ctx, sess.Token)
	require.NoError(t, err, "a refused reset ends no session")

	o, err := b.svc.ResetPassword(ctx, "A@Example.com", newPassword)
	require.NoError(t, err)
	require.Equal(t, a.ID, o.ID, "the email matches without regard to case")
	_, err = b.svc.AuthenticateSession(ctx, sess.Token)
	require.Error(t, err, "the reset ends the owner's sessions")
	_, err = b.svc.AuthenticateSession(ctx, otherSess.Token)
	require.NoError(t, err, "another owner's session stays")
	_, err = b.login("a@example.com", testPassword, "192.0.2.2")
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
	_, err = b.login("a@example.com", newPassword, "192.0.2.2")
	require.NoError(t, err)
}

func TestEndSessions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "a@example.com")
	b.newOwner(t, "b@example.com")
	s1, err := b.login("a@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	s2, err := b.login("a@example.com", testPassword, "192.0.2.3")
	require.NoError(t, err)
	sb, err := b.login("b@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	require.NoError(t, b.svc.EndSessions(ctx, s1.Owner.ID))
	for _, tok := range []string{s1.Token, s2.Token} {
		_, err := b.svc.AuthenticateSession(ctx, tok)
		require.Error(t, err)
	}
	_, err = b.svc.AuthenticateSession(ctx, sb.Token)
	require.NoError(t, err)
}

func TestListAndEndOneSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "a@example.com")
	b.newOwner(t, "b@example.com")
	s1, err := b.login("a@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
	b.clock.Advance(1000)
	s2, err := b.login("a@example.com", testPassword, "192.0.2.3")
	require.NoError(t, err)
	sb, err := b.login("b@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)

	list, err := b.svc.ListSessions(ctx, s1.Owner.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, s2.Session.ID, list[0].ID, "newest first")
	require.Equal(t, "192.0.2.3", list[0].IP)

	requireCode(t, b.svc.EndSession(ctx, s1.Owner.ID, sb.Session.ID), domain.KindNotFound, owner.CodeSessionNotFound)
	_, err = b.svc.AuthenticateSession(ctx, sb.Token)
	require.NoError(t, err, "another owner's session cannot be ended")

	require.NoError(t, b.svc.EndSession(ctx, s1.Owner.ID, s1.Session.ID))
	_, err = b.svc.AuthenticateSession(ctx, s1.Token)
	require.Error(t, err)
	_, err = b.svc.AuthenticateSession(ctx, s2.Token)
	require.NoError(t, err, "only that session ends")
	requireCode(t, b.svc.EndSession(ctx, s1.Owner.ID, s1.Session.ID), domain.KindNotFound, owner.CodeSessionNotFound)
}
