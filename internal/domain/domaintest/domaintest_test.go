package domaintest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/domaintest"
)

const declared = "booking.created"

func TestRecorderChecksWhatTheRealOneChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	owner := uuid.New()
	cases := []struct {
		name, typ string
		data      any
		ok        bool
	}{
		{"object", declared, map[string]any{"a": 1}, true},
		{"struct", declared, struct{ A int }{1}, true},
		{"undeclared type", "no.such.type", map[string]any{}, false},
		{"array data", declared, []int{1}, false},
		{"null data", declared, nil, false},
		{"unmarshalable data", declared, map[string]any{"f": func() {}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := domaintest.NewRecorder()
			id, err := r.Record(ctx, owner, c.typ, "subj", c.data)
			if !c.ok {
				require.Error(t, err)
				require.Empty(t, r.Events())
				return
			}
			require.NoError(t, err)
			evs := r.Events()
			require.Len(t, evs, 1)
			require.Equal(t, domaintest.Event{ID: id, OwnerID: owner, Type: c.typ, Subject: "subj", Data: evs[0].Data}, evs[0])
			require.Equal(t, byte('{'), evs[0].Data[0])
		})
	}
}

func TestRecorderFailsWhenToldAndReturnsFreshIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := domaintest.NewRecorder()
	boom := errors.New("boom")
	r.Fail(func(typ string) error {
		if typ == declared {
			return boom
		}
		return nil
	})
	_, err := r.Record(ctx, uuid.New(), declared, "", map[string]any{})
	require.ErrorIs(t, err, boom)
	r.Fail(nil)
	a, err := r.Record(ctx, uuid.New(), declared, "", map[string]any{})
	require.NoError(t, err)
	b, err := r.Record(ctx, uuid.New(), declared, "", map[string]any{})
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	require.NotEqual(t, uuid.Nil, a)
}

// TestRecorderIsSafeForConcurrentUse runs under the race detector in make
// test.
func TestRecorderIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	r := domaintest.NewRecorder()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, err := r.Record(context.Background(), uuid.New(), declared, "", map[string]any{})
				require.NoError(t, err)
				r.Fail(nil)
				require.NotEmpty(t, r.Events())
			}
		}()
	}
	wg.Wait()
	require.Len(t, r.Events(), 400)
	ids := map[uuid.UUID]bool{}
	for _, ev := range r.Events() {
		ids[ev.ID] = true
	}
	require.Len(t, ids, 400)
}

type state struct{ m map[string]int }

func clone(s state) state {
	c := state{m: map[string]int{}}
	for k, v := range s.m {
		c.m[k] = v
	}
	return c
}

func TestSnapshotKeepsTheCopyOnlyWhenFnReturnsNil(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := domaintest.NewSnapshot(state{m: map[string]int{}}, clone)
	owner := uuid.New()
	require.NoError(t, s.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		st.m["a"] = 1
		_, err := rec.Record(ctx, owner, declared, "a", map[string]any{})
		require.Len(t, rec.Events(), 1, "the transaction sees its own event")
		require.Empty(t, s.Recorder().Events(), "nobody else does before commit")
		return err
	}))
	refused := errors.New("refused")
	var stray *domaintest.TxRecorder
	err := s.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		st.m["a"] = 2
		st.m["b"] = 1
		_, err := rec.Record(ctx, owner, declared, "b", map[string]any{})
		require.NoError(t, err)
		stray = rec
		return refused
	})
	require.Same(t, refused, err)
	s.View(func(st state) { require.Equal(t, map[string]int{"a": 1}, st.m) })
	evs := s.Recorder().Events()
	require.Len(t, evs, 1)
	require.Equal(t, "a", evs[0].Subject)
	total, rolledBack := s.Transactions()
	require.Equal(t, 2, total)
	require.Equal(t, 1, rolledBack)

	_, err = stray.Record(ctx, owner, declared, "late", map[string]any{})
	require.ErrorIs(t, err, domaintest.ErrTxEnded)
	require.Equal(t, 1, s.Recorder().Strays())
}

func TestSnapshotFailedRecordRollsBackWhenFnReturnsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := domaintest.NewSnapshot(state{m: map[string]int{}}, clone)
	boom := errors.New("boom")
	s.Recorder().Fail(func(string) error { return boom })
	err := s.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		st.m["a"] = 1
		_, err := rec.Record(ctx, uuid.New(), declared, "", map[string]any{})
		return err
	})
	require.ErrorIs(t, err, boom)
	s.View(func(st state) { require.Empty(t, st.m) })
}

func TestSnapshotSerialisesTransactions(t *testing.T) {
	t.Parallel()
	s := domaintest.NewSnapshot(state{m: map[string]int{}}, clone)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				require.NoError(t, s.Do(context.Background(), func(st *state, _ *domaintest.TxRecorder) error {
					st.m["n"]++
					return nil
				}))
			}
		}()
	}
	wg.Wait()
	s.View(func(st state) { require.Equal(t, 200, st.m["n"]) })
}
