package bench

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// LoadResult is the outcome of a fixed-count load run.
type LoadResult struct {
	Requests int
	Elapsed  time.Duration
	Statuses map[int]int
	Errors   int
	Latency  *Latencies
}

// PerSecond returns completed requests per second.
func (r LoadResult) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Load sends n requests built by build(i) with the given concurrency, each
// bounded by the context, and returns throughput, latencies and statuses.
func Load(ctx context.Context, client *http.Client, n, concurrency int, build func(i int) (*http.Request, error)) LoadResult {
	res := LoadResult{Requests: n, Statuses: map[int]int{}, Latency: &Latencies{}}
	var next int64 = -1
	var mu sync.Mutex
	var errs int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(atomic.AddInt64(&next, 1))
				if i >= n || ctx.Err() != nil {
					return
				}
				req, err := build(i)
				if err != nil {
					atomic.AddInt64(&errs, 1)
					continue
				}
				t0 := time.Now()
				resp, err := client.Do(req.WithContext(ctx))
				if err != nil {
					atomic.AddInt64(&errs, 1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body) // drained for reuse; the status is what counts
				resp.Body.Close()
				res.Latency.Add(time.Since(t0))
				mu.Lock()
				res.Statuses[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Errors = int(errs)
	return res
}

// NewClient returns an HTTP client for loopback load with enough idle
// connections for the concurrency.
func NewClient(concurrency int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        concurrency * 2,
			MaxIdleConnsPerHost: concurrency * 2,
			IdleConnTimeout:     30 * time.Second,
		},
	}
}
