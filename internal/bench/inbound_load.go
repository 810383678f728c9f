package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// InboundLoadOptions configure InboundLoad.
type InboundLoadOptions struct {
	// BaseURL is the running server, e.g. http://127.0.0.1:8080.
	BaseURL string
	// SourceID and Secret are a standard-webhooks source of that server and
	// its whsec_ secret (as inbound_sources.create returned them).
	SourceID string
	Secret   string
	// Requests is the number of distinct signed messages (default 20,000).
	Requests int
	// Concurrency is the number of senders (default 32).
	Concurrency int
	// Pool, when set, measures the ceiling in the same run: bare
	// single-row INSERTs, one per transaction, at the same concurrency
	// (capped by the pool's size), into a scratch table it drops after.
	Pool *pgxpool.Pool
}

// InboundLoadResult holds InboundLoad's request counts, statuses and latencies.
type InboundLoadResult struct {
	Requests    int
	Concurrency int
	Accepted    int
	// Statuses counts the answers by HTTP status (0: transport error).
	Statuses map[int]int
	Elapsed  time.Duration
	// AcceptedPerSec is 202 answers per second of wall time.
	AcceptedPerSec float64
	// P50 and P99 are request latencies (send to full answer).
	P50, P99 time.Duration
	// InsertPerSec is the bare single-row INSERT rate (0 without Pool).
	InsertPerSec float64
	// InsertConcurrency is the concurrency the INSERT ceiling ran at.
	InsertConcurrency int
}

// InboundLoad sends Requests distinct Standard-Webhooks-signed messages to the
// source from Concurrency senders and measures accepted/s and latency
// percentiles; with a Pool it measures the bare INSERT ceiling right after,
// in the same run. Every message is signed before the clock starts, so
// signing costs are not counted.
func InboundLoad(ctx context.Context, o InboundLoadOptions) (InboundLoadResult, error) {
	if o.Requests <= 0 {
		o.Requests = 20000
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	key, err := standardwebhooks.ParseSecret(o.Secret)
	if err != nil {
		return InboundLoadResult{}, fmt.Errorf("inbound bench: secret: %w", err)
	}
	url := o.BaseURL + "/hooks/" + o.SourceID
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	type signed struct {
		id, ts, sig string
		body        []byte
	}
	now := time.Now()
	msgs := make([]signed, o.Requests)
	for i := range msgs {
		id := "bench_" + run + "_" + strconv.Itoa(i)
		body := []byte(`{"type":"bench.message","seq":` + strconv.Itoa(i) + `,"data":{"sku":"sku-` + strconv.Itoa(i%977) + `","qty":3}}`)
		msgs[i] = signed{id: id, ts: strconv.FormatInt(now.Unix(), 10), sig: standardwebhooks.Sign(key, id, now, body), body: body}
	}

	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConns: o.Concurrency * 2, MaxIdleConnsPerHost: o.Concurrency * 2},
	}
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, o.Requests)
	codes := make([]int, o.Requests)
	var next atomic.Int64
	next.Store(-1)
	var wg sync.WaitGroup
	start := time.Now()
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i >= len(msgs) || ctx.Err() != nil {
					return
				}
				m := msgs[i]
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(m.body))
				if err != nil {
					continue
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(standardwebhooks.HeaderID, m.id)
				req.Header.Set(standardwebhooks.HeaderTimestamp, m.ts)
				req.Header.Set(standardwebhooks.HeaderSignature, m.sig)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					// Draining lets the connection be reused; the status is
					// already read, so a drain error does not change the result.
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					codes[i] = resp.StatusCode
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	res := InboundLoadResult{Requests: o.Requests, Concurrency: o.Concurrency, Elapsed: time.Since(start), Statuses: map[int]int{}}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	for _, c := range codes {
		res.Statuses[c]++
	}
	res.Accepted = res.Statuses[http.StatusAccepted]
	res.AcceptedPerSec = float64(res.Accepted) / res.Elapsed.Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.P50, res.P99 = lat[len(lat)*50/100], lat[min(len(lat)*99/100, len(lat)-1)]
	if res.Accepted != o.Requests {
		return res, fmt.Errorf("inbound bench: %d of %d accepted (%v)", res.Accepted, o.Requests, res.Statuses)
	}

	if o.Pool != nil {
		res.InsertConcurrency = min(o.Concurrency, int(o.Pool.Config().MaxConns))
		if res.InsertPerSec, err = bareInsertRate(ctx, o.Pool, res.InsertConcurrency, o.Requests); err != nil {
			return res, err
		}
	}
	return res, nil
}

// bareInsertRate measures single-row INSERTs per second (each its own
// transaction) from concurrency goroutines into a scratch table, which it
// drops afterwards: the ceiling the gateway's accepted/s is compared to.
func bareInsertRate(ctx context.Context, pool *pgxpool.Pool, concurrency, n int) (rate float64, err error) {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_inbound_insert (
		id bigserial PRIMARY KEY, v text NOT NULL, at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("inbound bench: create scratch table: %w", err)
	}
	defer func() {
		if _, dropErr := pool.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS bench_inbound_insert`); dropErr != nil {
			err = errors.Join(err, fmt.Errorf("inbound bench: drop scratch table: %w", dropErr))
		}
	}()
	var next atomic.Int64
	next.Store(-1)
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) < int64(n) {
				if _, err := pool.Exec(ctx, `INSERT INTO bench_inbound_insert (v) VALUES ($1)`, "x"); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return 0, errors.Join(errors.New("inbound bench: insert"), *p)
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
