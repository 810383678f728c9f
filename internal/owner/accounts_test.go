package owner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
)

func TestCreateOwnerValidates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, email, password, code string
	}{
		{"empty email", "", testPassword, owner.CodeInvalidEmail},
		{"no at sign", "owner.example.com", testPassword, owner.CodeInvalidEmail},
		{"display name", "Owner <owner@example.com>", testPassword, owner.CodeInvalidEmail},
		{"too long email", strings.Repeat("a", 250) + "@example.com", testPassword, owner.CodeInvalidEmail},
		{"short password", "owner@example.com", "short", owner.CodeWeakPassword},
		{"huge password", "owner@example.com", strings.Repeat("p", owner.MaxPasswordLen+1), owner.CodeWeakPassword},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.svc.CreateOwner(context.Background(), c.email, c.password)
			requireCode(t, err, domain.KindValidation, c.code)
			has, err := b.svc.HasOwners(context.Background())
			require.NoError(t, err)
			require.False(t, has)
		})
	}
}

func TestCreateOwnerStoresOnlyTheHashAndRefusesATakenEmailInAnyCase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	has, err := b.svc.HasOwners(ctx)
	require.NoError(t, err)
	require.False(t, has)

	o, err := b.svc.CreateOwner(ctx, "  Owner@Example.com ", testPassword)
	require.NoError(t, err)
	require.Equal(t, "Owner@Example.com", o.Email)
	require.NotContains(t, o.PasswordHash, testPassword)
	require.Equal(t, "fake$"+strings.ToUpper(testPassword), o.PasswordHash)

	_, err = b.svc.CreateOwner(ctx, "owner@EXAMPLE.com", testPassword)
	requireCode(t, err, domain.KindConflict, owner.CodeEmailTaken)

	has, err = b.svc.HasOwners(ctx)
	require.NoError(t, err)
	require.True(t, has)
	me, err := b.svc.Me(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, o, me)
}

func TestGeneratePasswordIsLongEnough(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pw, err := b.svc.GeneratePassword()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(pw), owner.MinPasswordLen)
	_, err = b.svc.CreateOwner(context.Background(), "gen@example.com", pw)
	require.NoError(t, err)
}

func TestChangeEmail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	b.newOwner(t, "b@example.com")

	_, err := b.svc.ChangeEmail(ctx, a.ID, "new@example.com", "wrong password!!")
	requireCode(t, err, domain.KindForbidden, owner.CodeWrongPassword)
	_, err = b.svc.ChangeEmail(ctx, a.ID, "B@example.com", testPassword)
	requireCode(t, err, domain.KindConflict, owner.CodeEmailTaken)
	_, err = b.svc.ChangeEmail(ctx, a.ID, "not an email", testPassword)
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidEmail)
	require.Empty(t, b.eventsOf(domain.EventOwnerEmailChanged))

	b.clock.Advance(1000)
	got, err := b.svc.ChangeEmail(ctx, a.ID, "new@example.com", testPassword)
	require.NoError(t, err)
	require.Equal(t, "new@example.com", got.Email)
	me, err := b.svc.Me(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, "new@example.com", me.Email)

	evs := b.eventsOf(domain.EventOwnerEmailChanged)
	require.Len(t, evs, 1)
	require.Equal(t, a.ID, evs[0].OwnerID)
	require.Equal(t, "owner/"+a.ID.String(), evs[0].Subject)
	require.Equal(t, map[string]any{"owner_id": a.ID.String()}, dataOf(t, evs[0]), "thin: no address leaves the instance")

	// The old email no longer logs in; the new one does.
	_, err = b.login("a@example.com", testPassword, "192.0.2.1")
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidCredentials)
	_, err = b.login("NEW@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)
}

func TestChangeEmailRollsBackWhenRecordFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	b.mem.Recorder().Fail(func(eventType string) error {
		if eventType == domain.EventOwnerEmailChanged {
			return errors.New("recorder down")
		}
		return nil
	})
	_, err := b.svc.ChangeEmail(ctx, a.ID, "new@example.com", testPassword)
	require.Error(t, err)
	me, err := b.svc.Me(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, "a@example.com", me.Email, "the change and its event commit together or not at all")
}

func TestMemoryRecorderRefusesOutsideItsTransaction(t *testing.T) {
	t.Parallel()
	mem := ownertest.NewMemory()
	var leaked owner.Tx
	require.NoError(t, mem.Do(context.Background(), func(tx owner.Tx) error {
		leaked = tx
		return nil
	}))
	_, err := leaked.Recorder().Record(context.Background(), [16]byte{1}, domain.EventOwnerLogin, "s", map[string]any{})
	require.ErrorIs(t, err, domaintest.ErrTxEnded)
	require.Equal(t, 1, mem.StrayRecords())
	require.Empty(t, mem.Events())

	// Events of a rolled-back transaction vanish with it.
	err = mem.Do(context.Background(), func(tx owner.Tx) error {
		if _, err := tx.Recorder().Record(context.Background(), [16]byte{1}, domain.EventOwnerLogin, "s", map[string]any{}); err != nil {
			return err
		}
		return errors.New("abort")
	})
	require.EqualError(t, err, "abort")
	require.Empty(t, mem.Events())
}

func TestSetOperatorGrantsRevokesAndRecordsOnlyChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	other := b.newOwner(t, "b@example.com")

	is, err := b.svc.IsOperator(ctx, a.ID)
	require.NoError(t, err)
	require.False(t, is, "a new owner is not the operator")

	got, err := b.svc.SetOperator(ctx, "A@example.com", true)
	require.NoError(t, err)
	require.True(t, got.Operator)
	_, err = b.svc.SetOperator(ctx, "a@example.com", true)
	require.NoError(t, err)
	is, err = b.svc.IsOperator(ctx, a.ID)
	require.NoError(t, err)
	require.True(t, is)
	is, err = b.svc.IsOperator(ctx, other.ID)
	require.NoError(t, err)
	require.False(t, is, "granting one owner grants no other")

	_, err = b.svc.SetOperator(ctx, "a@example.com", false)
	require.NoError(t, err)
	is, err = b.svc.IsOperator(ctx, a.ID)
	require.NoError(t, err)
	require.False(t, is)

	evs := b.eventsOf(domain.EventOwnerOperatorChanged)
	require.Len(t, evs, 2, "a grant and a revoke; the repeated grant records nothing")
	require.Equal(t, true, dataOf(t, evs[0])["operator"])
	require.Equal(t, false, dataOf(t, evs[1])["operator"])

	_, err = b.svc.SetOperator(ctx, "nobody@example.com", true)
	require.ErrorIs(t, err, domain.ErrNotFound)
}
