package ownerdb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
)

// TestConcurrentWritersOnPostgres: what PostgreSQL's locks and unique
// indexes guarantee under concurrency — a recovery token is spent once, and
// one owner gets one open ban per IP — however many transactions race.
func TestConcurrentWritersOnPostgres(t *testing.T) {
	t.Parallel()
	h := newPostgres(t)
	ctx := context.Background()
	a := mkOwner(t, h, "a@example.com", t0)
	do(t, h, func(tx owner.Tx) error {
		return tx.Recovery().Create(ctx, owner.RecoveryToken{ID: uuid.New(), OwnerID: a.ID, TokenHash: owner.DigestOf("race"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	})

	const n = 8
	var (
		wg                   sync.WaitGroup
		mu                   sync.Mutex
		consumed, notFound   int
		bansAdded, bansFound int
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.UoW.Do(ctx, func(tx owner.Tx) error {
				_, err := tx.Recovery().Consume(ctx, owner.DigestOf("race"), t0.Add(time.Minute))
				return err
			})
			added := false
			berr := h.UoW.Do(ctx, func(tx owner.Tx) error {
				var err error
				added, err = tx.Bans().Add(ctx, owner.IPBan{ID: uuid.New(), OwnerID: a.ID, IP: "203.0.113.1", Reason: "r", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				consumed++
			case domain.AsError(err) != nil && domain.AsError(err).Kind == domain.KindNotFound:
				notFound++
			default:
				t.Errorf("consume: %v", err)
			}
			if berr != nil {
				t.Errorf("add ban: %v", berr)
			}
			if added {
				bansAdded++
			} else {
				bansFound++
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, consumed)
	require.Equal(t, n-1, notFound)
	require.Equal(t, 1, bansAdded)
	require.Equal(t, n-1, bansFound)
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

// do runs fn in a committed transaction, failing the test on error.
func do(t *testing.T, h ownertest.Harness, fn func(tx owner.Tx) error) {
	t.Helper()
	require.NoError(t, h.UoW.Do(context.Background(), fn))
}

func mkOwner(t *testing.T, h ownertest.Harness, email string, at time.Time) owner.Owner {
	t.Helper()
	o := owner.Owner{ID: uuid.Must(uuid.NewV7()), Email: email, PasswordHash: "hash-of-" + email, CreatedAt: at, UpdatedAt: at}
	do(t, h, func(tx owner.Tx) error { return tx.Owners().Create(context.Background(), o) })
	return o
}
