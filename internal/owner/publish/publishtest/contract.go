// Package publishtest is the contract every publish.UnitOfWork passes: the
// in-memory fake and the PostgreSQL adapter run the same suite.
package publishtest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/publish"
)

// Harness is what the contract needs from an implementation.
type Harness struct {
	UoW publish.UnitOfWork
	// EventIDs returns the committed events of ownerID, oldest first.
	EventIDs func(t *testing.T, ownerID uuid.UUID) []uuid.UUID
	// Prune removes an event as the retention does.
	Prune func(t *testing.T, eventID uuid.UUID)
}

// RunContract runs the suite; newHarness returns a fresh, empty store.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	data := map[string]any{"booking_id": "b_1", "starts_at": "2026-12-08T09:30:00Z"}
	fingerprint := bytes.Repeat([]byte{7}, 32)
	record := func(t *testing.T, h Harness, owner uuid.UUID, key string) (uuid.UUID, bool) {
		t.Helper()
		var id uuid.UUID
		var claimed bool
		require.NoError(t, h.UoW.Do(ctx, func(tx publish.Tx) error {
			var err error
			id, err = tx.Recorder().Record(ctx, owner, "booking.created", "booking://b_1", data)
			if err != nil {
				return err
			}
			claimed, err = tx.Keys().Claim(ctx, owner, key, publish.Claimed{EventID: id, Fingerprint: fingerprint})
			return err
		}))
		return id, claimed
	}

	t.Run("a claimed key is found, per owner", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		a, b := uuid.New(), uuid.New()
		id, ok := record(t, h, a, "k1")
		require.True(t, ok)
		require.NoError(t, h.UoW.Do(ctx, func(tx publish.Tx) error {
			got, found, err := tx.Keys().Find(ctx, a, "k1")
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, publish.Claimed{EventID: id, Fingerprint: fingerprint}, got, "the key keeps its event and its request's fingerprint")
			_, found, err = tx.Keys().Find(ctx, b, "k1")
			require.NoError(t, err)
			require.False(t, found, "another owner's key is not found")
			_, found, err = tx.Keys().Find(ctx, a, "k2")
			require.NoError(t, err)
			require.False(t, found)
			return nil
		}))
		require.Equal(t, []uuid.UUID{id}, h.EventIDs(t, a))
	})

	t.Run("a taken key is not claimed again", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		owner := uuid.New()
		first, ok := record(t, h, owner, "k")
		require.True(t, ok)
		sentinel := errors.New("roll back")
		err := h.UoW.Do(ctx, func(tx publish.Tx) error {
			id, err := tx.Recorder().Record(ctx, owner, "booking.created", "booking://b_1", data)
			require.NoError(t, err)
			claimed, err := tx.Keys().Claim(ctx, owner, "k", publish.Claimed{EventID: id, Fingerprint: fingerprint})
			require.NoError(t, err)
			require.False(t, claimed)
			return sentinel
		})
		require.ErrorIs(t, err, sentinel)
		require.Equal(t, []uuid.UUID{first}, h.EventIDs(t, owner), "the rolled-back event is gone")
	})

	t.Run("nothing of a failed transaction is kept", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		owner := uuid.New()
		sentinel := errors.New("fail")
		err := h.UoW.Do(ctx, func(tx publish.Tx) error {
			id, err := tx.Recorder().Record(ctx, owner, "booking.created", "booking://b_1", data)
			require.NoError(t, err)
			ok, err := tx.Keys().Claim(ctx, owner, "k", publish.Claimed{EventID: id, Fingerprint: fingerprint})
			require.NoError(t, err)
			require.True(t, ok)
			return sentinel
		})
		require.ErrorIs(t, err, sentinel)
		require.Empty(t, h.EventIDs(t, owner))
		_, ok := record(t, h, owner, "k")
		require.True(t, ok, "the key was never committed")
	})

	t.Run("a pruned event frees its key", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		owner := uuid.New()
		id, ok := record(t, h, owner, "k")
		require.True(t, ok)
		h.Prune(t, id)
		require.NoError(t, h.UoW.Do(ctx, func(tx publish.Tx) error {
			_, found, err := tx.Keys().Find(ctx, owner, "k")
			require.NoError(t, err)
			require.False(t, found)
			return nil
		}))
		_, ok = record(t, h, owner, "k")
		require.True(t, ok)
	})

	t.Run("the recorder refuses undeclared types", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		err := h.UoW.Do(ctx, func(tx publish.Tx) error {
			_, err := tx.Recorder().Record(ctx, uuid.New(), "booking.exploded", "booking://b", data)
			return err
		})
		require.Error(t, err)
	})
}
