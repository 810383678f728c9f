package owner_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// hammer sends n failed logins for email from ip and returns the last error.
func (b *testBundle) hammer(t *testing.T, n int, email, ip string) error {
	t.Helper()
	var err error
	for i := 0; i < n; i++ {
		_, err = b.login(email, "wrong password!", ip)
		require.Error(t, err)
	}
	return err
}

func TestRepeatedAbuseBansTheIP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	other := b.newOwner(t, "b@example.com")
	lim := b.svc.Limits()
	const attacker = "203.0.113.66"

	// One short of the threshold: limited, not banned.
	err := b.hammer(t, lim.BanAfter-1, "a@example.com", attacker)
	requireCode(t, err, domain.KindRateLimited, owner.CodeRateLimited)
	banned, err := b.svc.IsBanned(ctx, attacker)
	require.NoError(t, err)
	require.False(t, banned)
	require.Empty(t, b.eventsOf(domain.EventIPBanAdded))

	// The threshold-th refusal bans the IP, recorded for the targeted owner.
	err = b.hammer(t, 1, "a@example.com", attacker)
	requireCode(t, err, domain.KindRateLimited, owner.CodeRateLimited)
	banned, err = b.svc.IsBanned(ctx, attacker)
	require.NoError(t, err)
	require.True(t, banned, "the ban takes effect at once on the replica that added it")
	evs := b.eventsOf(domain.EventIPBanAdded)
	require.Len(t, evs, 1)
	require.Equal(t, a.ID, evs[0].OwnerID)
	require.Equal(t, attacker, dataOf(t, evs[0])["ip"])

	// A banned IP cannot even log in with the right password.
	_, err = b.login("a@example.com", testPassword, attacker)
	requireCode(t, err, domain.KindForbidden, owner.CodeIPBanned)
	// The owner can, from elsewhere: the banned IP's failures no longer
	// count against the account.
	_, err = b.login("a@example.com", testPassword, "192.0.2.1")
	require.NoError(t, err)

	// The owner sees the ban; another owner neither sees nor lifts it.
	page, err := b.svc.ListBans(ctx, a.ID, op.PageInput{})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	require.Equal(t, attacker, page.Data[0].IP)
	require.Nil(t, page.NextCursor)
	otherPage, err := b.svc.ListBans(ctx, other.ID, op.PageInput{})
	require.NoError(t, err)
	require.Empty(t, otherPage.Data)
	requireCode(t, b.svc.LiftBan(ctx, other.ID, page.Data[0].ID), domain.KindNotFound, "NOT_FOUND")

	// Lifting ends it at once and gives the IP a clean slate.
	require.NoError(t, b.svc.LiftBan(ctx, a.ID, page.Data[0].ID))
	banned, err = b.svc.IsBanned(ctx, attacker)
	require.NoError(t, err)
	require.False(t, banned)
	requireCode(t, b.svc.LiftBan(ctx, a.ID, page.Data[0].ID), domain.KindNotFound, "NOT_FOUND")
	_, err = b.login("a@example.com", testPassword, attacker)
	require.NoError(t, err)
}

func TestBanExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "a@example.com")
	lim := b.svc.Limits()
	b.hammer(t, lim.BanAfter, "a@example.com", "203.0.113.1")
	banned, err := b.svc.IsBanned(ctx, "203.0.113.1")
	require.NoError(t, err)
	require.True(t, banned)
	b.clock.Advance(lim.BanDuration)
	banned, err = b.svc.IsBanned(ctx, "203.0.113.1")
	require.NoError(t, err)
	require.False(t, banned)
}

func TestBanAttribution(t *testing.T) {
	t.Parallel()
	t.Run("every targeted owner gets a ban of their own", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		a := b.newOwner(t, "a@example.com")
		c := b.newOwner(t, "c@example.com")
		lim := b.svc.Limits()
		b.hammer(t, 3, "a@example.com", "203.0.113.5")
		b.hammer(t, lim.BanAfter-3, "c@example.com", "203.0.113.5")
		owners := map[uuid.UUID]bool{}
		for _, e := range b.eventsOf(domain.EventIPBanAdded) {
			owners[e.OwnerID] = true
		}
		require.Equal(t, map[uuid.UUID]bool{a.ID: true, c.ID: true}, owners)
	})
	t.Run("spraying unknown accounts is charged to the first owner", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := b.newOwner(t, "first@example.com")
		b.clock.Advance(time.Second)
		b.newOwner(t, "second@example.com")
		lim := b.svc.Limits()
		for i := 0; i < lim.BanAfter; i++ {
			_, err := b.login(fmt.Sprintf("nobody%d@example.com", i), "wrong password!", "203.0.113.6")
			require.Error(t, err)
		}
		evs := b.eventsOf(domain.EventIPBanAdded)
		require.Len(t, evs, 1)
		require.Equal(t, first.ID, evs[0].OwnerID)
	})
	t.Run("no owner, no ban", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.hammer(t, b.svc.Limits().BanAfter+2, "nobody@example.com", "203.0.113.7")
		banned, err := b.svc.IsBanned(context.Background(), "203.0.113.7")
		require.NoError(t, err)
		require.False(t, banned)
	})
}

func TestOtherReplicasSeeABanWithinTheCacheTTL(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// A second service on the same storage stands for another replica.
	replica, err := owner.New(owner.Deps{UoW: b.mem, Clock: b.clock, Hasher: b.hasher, Tokens: b.tokens})
	require.NoError(t, err)
	banned, err := replica.IsBanned(ctx, "203.0.113.8")
	require.NoError(t, err)
	require.False(t, banned)

	b.newOwner(t, "a@example.com")
	b.hammer(t, b.svc.Limits().BanAfter, "a@example.com", "203.0.113.8")
	banned, err = replica.IsBanned(ctx, "203.0.113.8")
	require.NoError(t, err)
	require.False(t, banned, "the replica's cache is still fresh")
	b.clock.Advance(replica.Limits().BanCacheTTL)
	banned, err = replica.IsBanned(ctx, "203.0.113.8")
	require.NoError(t, err)
	require.True(t, banned)
}

func TestListBansPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	lim := b.svc.Limits()
	var ips []string
	for i := 0; i < 5; i++ {
		ip := fmt.Sprintf("203.0.113.%d", 10+i)
		ips = append([]string{ip}, ips...) // newest first
		b.hammer(t, lim.BanAfter, "a@example.com", ip)
		b.clock.Advance(lim.FailureWindow + time.Second) // let the account's limit reset
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		p, err := b.svc.ListBans(ctx, a.ID, op.PageInput{Limit: 2, Cursor: cursor})
		require.NoError(t, err)
		for _, x := range p.Data {
			got = append(got, x.IP)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	require.Equal(t, ips, got)

	_, err := b.svc.ListBans(ctx, a.ID, op.PageInput{Cursor: "not-a-cursor"})
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidCursor)
}

// flakyUoW fails every transaction while down is set.
type flakyUoW struct {
	owner.UnitOfWork
	down    atomic.Bool
	queries atomic.Int32
}

func (f *flakyUoW) Do(ctx context.Context, fn func(tx owner.Tx) error) error {
	f.queries.Add(1)
	if f.down.Load() {
		return errors.New("database unreachable")
	}
	return f.UnitOfWork.Do(ctx, fn)
}

func TestBanCheckSurvivesADatabaseOutage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.newOwner(t, "a@example.com")
	b.hammer(t, b.svc.Limits().BanAfter, "a@example.com", "203.0.113.20")

	flaky := &flakyUoW{UnitOfWork: b.mem}
	replica, err := owner.New(owner.Deps{UoW: flaky, Clock: b.clock, Hasher: b.hasher, Tokens: b.tokens})
	require.NoError(t, err)
	banned, err := replica.IsBanned(ctx, "203.0.113.20")
	require.NoError(t, err)
	require.True(t, banned)

	flaky.down.Store(true)
	b.clock.Advance(replica.Limits().BanCacheTTL)
	before := flaky.queries.Load()
	banned, err = replica.IsBanned(ctx, "203.0.113.20")
	require.Error(t, err, "the failed reload is reported")
	require.True(t, banned, "the last known list still applies")
	for i := 0; i < 10; i++ {
		banned, err = replica.IsBanned(ctx, "203.0.113.20")
		require.NoError(t, err)
		require.True(t, banned)
	}
	require.Equal(t, before+1, flaky.queries.Load(), "one failed query per TTL, not one per request")

	// A replica that never read the list lets requests through, with the error.
	cold, err := owner.New(owner.Deps{UoW: flaky, Clock: b.clock, Hasher: b.hasher, Tokens: b.tokens})
	require.NoError(t, err)
	banned, err = cold.IsBanned(ctx, "203.0.113.20")
	require.Error(t, err)
	require.False(t, banned)
}
