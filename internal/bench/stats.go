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

// Values returns a copy in the order recorded.
func (l *Latencies) Values() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.d...)
}

// Series returns the sorted distribution under a chart name.
func (l *Latencies) Series(name string) Series {
	return Series{Name: name, Data: l.Sorted()}
}

// SerialQueue is the latency an ideal one-at-a-time sender would give:
// message i becomes ready at ready[i] (sorted), the sender starts it when it
// is ready and the previous one is done, and sending takes service[i mod
// len(service)] (service times measured by a real serial loop). It returns
// each message's ready-to-done latency: the ceiling for commit-to-receipt
// latency with one delivery in flight per endpoint.
func SerialQueue(ready []time.Time, service []time.Duration) *Latencies {
	out := &Latencies{}
	if len(service) == 0 {
		return out
	}
	var done time.Time
	for i, r := range ready {
		start := r
		if done.After(start) {
			start = done
		}
		done = start.Add(service[i%len(service)])
		out.Add(done.Sub(r))
	}
	return out
}

// Timed is one latency and when its work began.
type Timed struct {
	At time.Time
	D  time.Duration
}

// WindowP99s splits the samples begun in [start, start+span) into n windows
// of equal length by when they began (a sample past the end counts in the
// last) and returns each window's p99, 0 for a window without samples.
func WindowP99s(samples []Timed, start time.Time, span time.Duration, n int) []time.Duration {
	if n < 1 {
		n = 1
	}
	by := make([][]time.Duration, n)
	for _, s := range samples {
		k := 0
		if span > 0 {
			k = min(max(int(int64(s.At.Sub(start))*int64(n)/int64(span)), 0), n-1)
		}
		by[k] = append(by[k], s.D)
	}
	out := make([]time.Duration, n)
	for i, w := range by {
		sort.Slice(w, func(a, b int) bool { return w[a] < w[b] })
		out[i] = percentileOf(w, 99)
	}
	return out
}

// Median is the middle of ds (the mean of the two middle ones for an even
// count), 0 when empty: the typical window, whatever one window caught.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
