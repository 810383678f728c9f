package batch_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/batch"
)

// Calls that arrive while a statement runs go together in the next one;
// each gets its own result; calls with one key never share a statement.
func TestCallsShareStatementsAndKeysStayApart(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		sizes   []int
		running atomic.Int32
		maxRun  atomic.Int32
	)
	release := make(chan struct{})
	first := true
	g := &batch.Group[int, int]{
		Run: func(_ context.Context, reqs []int) ([]int, error) {
			n := running.Add(1)
			defer running.Add(-1)
			if n > maxRun.Load() {
				maxRun.Store(n)
			}
			mu.Lock()
			sizes = append(sizes, len(reqs))
			wait := first
			first = false
			seen := map[int]bool{}
			for _, r := range reqs {
				require.False(t, seen[r%10], "two calls of key %d in one statement", r%10)
				seen[r%10] = true
			}
			mu.Unlock()
			if wait {
				<-release
			}
			out := make([]int, len(reqs))
			for i, r := range reqs {
				out[i] = r * 2
			}
			return out, nil
		},
		Key: func(r int) (any, bool) { return r % 10, r >= 100 },
	}
	ctx := context.Background()
	done := make(chan int, 1)
	go func() {
		v, err := g.Do(ctx, 1)
		require.NoError(t, err)
		done <- v
	}()
	require.Eventually(t, func() bool { return running.Load() == 1 }, 5e9, 1e6)
	var (
		wg      sync.WaitGroup
		started atomic.Int32
	)
	results := make([]int, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			v, err := g.Do(ctx, 100+i)
			require.NoError(t, err)
			results[i] = v
		}()
	}
	require.Eventually(t, func() bool { return started.Load() == 40 }, 5e9, 1e6)
	// Do queues its call before it blocks; give the last ones that moment.
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	require.Equal(t, 2, <-done)
	for i, v := range results {
		require.Equal(t, 2*(100+i), v)
	}
	require.Equal(t, int32(1), maxRun.Load(), "one statement in flight")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []int{1, 10, 10, 10, 10}, sizes, "the 40 waiting calls share statements, ten keys apart")
}

// A failed statement fails every call it carried, and only those.
func TestAFailedStatementFailsItsCalls(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	g := &batch.Group[int, int]{Run: func(_ context.Context, reqs []int) ([]int, error) {
		if reqs[0] < 0 {
			return nil, boom
		}
		return reqs, nil
	}}
	_, err := g.Do(context.Background(), -1)
	require.ErrorIs(t, err, boom)
	v, err := g.Do(context.Background(), 7)
	require.NoError(t, err)
	require.Equal(t, 7, v)
}
