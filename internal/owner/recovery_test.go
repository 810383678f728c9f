package owner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
)

func TestRecoveryRequestDeliversASingleUseTokenThroughTheOutbox(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	old, err := b.login("a@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)

	require.NoError(t, b.svc.RequestRecovery(ctx, " A@example.com", "192.0.2.1"))
	msgs := b.mem.Delivered()
	require.Len(t, msgs, 1)
	require.Equal(t, a.ID, msgs[0].OwnerID)
	require.Equal(t, "a@example.com", msgs[0].Email)
	require.Equal(t, b.clock.Now().Add(time.Hour), msgs[0].ExpiresAt)
	evs := b.eventsOf(domain.EventOwnerRecoveryRequested)
	require.Len(t, evs, 1)
	require.Equal(t, a.ID, evs[0].OwnerID)
	require.NotContains(t, string(evs[0].Data), msgs[0].Token)

	const newPassword = "a brand new passphrase"
	id, err := b.svc.CompleteRecovery(ctx, msgs[0].Token, newPassword)
	require.NoError(t, err)
	require.Equal(t, a.ID, id)
	_, err = b.svc.AuthenticateSession(ctx, old.Token)
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidSession)
	_, err = b.login("a@example.com", newPassword, "192.0.2.1")
	require.NoError(t, err)

	_, err = b.svc.CompleteRecovery(ctx, msgs[0].Token, "yet another passphrase")
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidRecoveryToken)
}

func TestRecoveryTokenExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "a@example.com")
	require.NoError(t, b.svc.RequestRecovery(ctx, "a@example.com", "192.0.2.1"))
	b.clock.Advance(time.Hour)
	_, err := b.svc.CompleteRecovery(ctx, b.mem.Delivered()[0].Token, "a brand new passphrase")
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidRecoveryToken)
	_, err = b.svc.CompleteRecovery(ctx, "made-up", "a brand new passphrase")
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidRecoveryToken)
	_, err = b.svc.CompleteRecovery(ctx, "made-up", "short")
	requireCode(t, err, domain.KindValidation, owner.CodeWeakPassword)
}

func TestRecoveryAnswersAlikeForUnknownAccounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.svc.RequestRecovery(context.Background(), "nobody@example.com", "192.0.2.1"))
	require.Empty(t, b.mem.Delivered())
	require.Empty(t, b.mem.Events())
}

func TestRecoveryIsLimited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "a@example.com")
	lim := b.svc.Limits()

	// Per account: later requests are answered alike but send nothing.
	for i := 0; i < lim.MaxRecoveriesPerAccount+1; i++ {
		require.NoError(t, b.svc.RequestRecovery(ctx, "a@example.com", fmt.Sprintf("198.51.100.%d", i+1)))
	}
	require.Len(t, b.mem.Delivered(), lim.MaxRecoveriesPerAccount)

	// Per IP: over the limit is RATE_LIMITED, whatever the email.
	for i := 0; i < lim.MaxRecoveriesPerIP; i++ {
		require.NoError(t, b.svc.RequestRecovery(ctx, fmt.Sprintf("x%d@example.com", i), "192.0.2.50"))
	}
	err := b.svc.RequestRecovery(ctx, "a@example.com", "192.0.2.50")
	requireCode(t, err, domain.KindRateLimited, owner.CodeRateLimited)

	b.clock.Advance(lim.RecoveryWindow + time.Second)
	require.NoError(t, b.svc.RequestRecovery(ctx, "a@example.com", "192.0.2.50"))
	require.Len(t, b.mem.Delivered(), lim.MaxRecoveriesPerAccount+1)
}

func TestRecoveryMessageIsNotSentWhenTheTransactionRollsBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newOwner(t, "a@example.com")
	b.mem.Recorder().Fail(func(string) error { return errors.New("recorder down") })
	require.Error(t, b.svc.RequestRecovery(context.Background(), "a@example.com", "192.0.2.1"))
	require.Empty(t, b.mem.Delivered())
}

func TestRequestUpgradeRecordsTheRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	req, err := b.svc.RequestUpgrade(ctx, a.ID, " more gas please ")
	require.NoError(t, err)
	require.Equal(t, b.clock.Now(), req.RequestedAt)
	evs := b.eventsOf(domain.EventInstanceUpgradeRequested)
	require.Len(t, evs, 1)
	require.Equal(t, req.EventID, evs[0].ID)
	require.Equal(t, a.ID, evs[0].OwnerID)
	require.Equal(t, true, dataOf(t, evs[0])["has_note"])
	require.NotContains(t, string(evs[0].Data), "gas please", "thin: the note's text does not leave the instance")

	_, err = b.svc.RequestUpgrade(ctx, a.ID, strings.Repeat("n", owner.MaxUpgradeNoteLen+1))
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidNote)
}
