// Package bench measures the StandMeet server: each figure beside a ceiling
// measured in the same run, on the same database, with the same River
// settings, and as a ratio to it. cmd/bench runs it (make bench).
package bench

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Latencies collects durations safely from many goroutines.
type Latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

// Add records one duration.
func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// Len returns how many were recorded.
func (l *Latencies) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.d)
}

// Sorted returns a sorted copy.
func (l *Latencies) Sorted() []time.Duration {
	l.mu.Lock()
	out := append([]time.Duration(nil), l.d...)
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Percentile returns the p-th percentile (0 < p ≤ 100), 0 when empty.
func (l *Latencies) Percentile(p float64) time.Duration {
	s := l.Sorted()
	return percentileOf(s, p)
}

func percentileOf(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

// Ms converts a duration to float milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Ratio returns a/b, 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
