// Package ratelimit is an in-process token-bucket limiter over two
// quantities at once (a count and a volume, e.g. events and bytes), kept
// per key. Each process of a deployment keeps its own buckets, so with N
// replicas a key may use up to N times its rate.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Rate is a refill per second and the most a bucket holds.
type Rate struct {
	PerSecond float64
	Burst     float64
}

// Limiter keeps one pair of buckets per key. The zero value is not usable;
// call New.
type Limiter struct {
	count, volume Rate
	now           func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	count, volume float64
	at            time.Time
}

// sweepAbove is the number of keys past which full (idle) buckets are
// dropped, which bounds memory by the keys active within a burst's refill.
const sweepAbove = 4096

// New returns a Limiter granting count and volume per key. now may be nil
// (time.Now).
func New(count, volume Rate, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{count: count, volume: volume, now: now, buckets: map[string]*bucket{}}
}

// Allow takes n of the count and v of the volume from key's buckets, or
// nothing: then it returns how long until both would hold enough. A request
// larger than a burst waits as if the bucket could hold it.
func (l *Limiter) Allow(key string, n, v int) (time.Duration, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= sweepAbove {
			l.sweep(now)
		}
		b = &bucket{count: l.count.Burst, volume: l.volume.Burst, at: now}
		l.buckets[key] = b
	}
	elapsed := now.Sub(b.at).Seconds()
	if elapsed > 0 {
		b.count = math.Min(l.count.Burst, b.count+elapsed*l.count.PerSecond)
		b.volume = math.Min(l.volume.Burst, b.volume+elapsed*l.volume.PerSecond)
		b.at = now
	}
	if float64(n) <= b.count && float64(v) <= b.volume {
		b.count -= float64(n)
		b.volume -= float64(v)
		return 0, true
	}
	wait := math.Max(deficit(float64(n)-b.count, l.count.PerSecond), deficit(float64(v)-b.volume, l.volume.PerSecond))
	return time.Duration(wait * float64(time.Second)), false
}

func deficit(missing, perSecond float64) float64 {
	if missing <= 0 || perSecond <= 0 {
		return 0
	}
	return missing / perSecond
}

// sweep drops the buckets that have refilled completely: forgetting them
// changes nothing.
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		elapsed := now.Sub(b.at).Seconds()
		if b.count+elapsed*l.count.PerSecond >= l.count.Burst && b.volume+elapsed*l.volume.PerSecond >= l.volume.Burst {
			delete(l.buckets, k)
		}
	}
}
