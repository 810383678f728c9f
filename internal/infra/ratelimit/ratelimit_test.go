package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestAllowTakesBothOrNothingAndRefills(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1000, 0)}
	l := New(Rate{PerSecond: 10, Burst: 20}, Rate{PerSecond: 1000, Burst: 1000}, c.now)
	_, ok := l.Allow("k", 20, 100)
	require.True(t, ok, "the burst is available at once")
	wait, ok := l.Allow("k", 1, 1)
	require.False(t, ok)
	require.Equal(t, 100*time.Millisecond, wait)
	c.add(100 * time.Millisecond)
	_, ok = l.Allow("k", 1, 1)
	require.True(t, ok)

	// Volume limits independently; a refusal takes nothing.
	wait, ok = l.Allow("v", 1, 1500)
	require.False(t, ok)
	require.Equal(t, 500*time.Millisecond, wait)
	_, ok = l.Allow("v", 20, 1000)
	require.True(t, ok, "the refused request took nothing")

	// Keys are independent.
	_, ok = l.Allow("other", 20, 0)
	require.True(t, ok)
}

func TestSweepKeepsMemoryBounded(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1000, 0)}
	l := New(Rate{PerSecond: 10, Burst: 10}, Rate{PerSecond: 10, Burst: 10}, c.now)
	for i := 0; i < 3*sweepAbove; i++ {
		_, ok := l.Allow(fmt.Sprint(i), 1, 1)
		require.True(t, ok)
		c.add(time.Second)
	}
	require.LessOrEqual(t, len(l.buckets), sweepAbove+1)
}

func TestConcurrentAllowNeverGrantsMoreThanTheBurst(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1000, 0)}
	l := New(Rate{PerSecond: 1, Burst: 50}, Rate{PerSecond: 1, Burst: 1e9}, c.now)
	var granted sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for i := 0; i < 200; i++ {
		granted.Add(1)
		go func() {
			defer granted.Done()
			if _, ok := l.Allow("k", 1, 1); ok {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	granted.Wait()
	require.Equal(t, 50, n)
}
