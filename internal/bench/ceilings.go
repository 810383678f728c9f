package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// InsertRate measures bare single-row INSERTs per second into a scratch
// table, from concurrency goroutines, each insert its own transaction.
func InsertRate(ctx context.Context, pool *pgxpool.Pool, concurrency, n int) (float64, error) {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_insert (id bigserial PRIMARY KEY, owner_id uuid NOT NULL DEFAULT gen_random_uuid(), v text NOT NULL, at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("create scratch table: %w", err)
	}
	var next int64 = -1
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for atomic.AddInt64(&next, 1) < int64(n) {
				if _, err := pool.Exec(ctx, `INSERT INTO bench_insert (v) VALUES ($1)`, "x"); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// noopArgs is a job that does nothing; its InsertedAt measures pickup.
type noopArgs struct {
	InsertedAt time.Time `json:"inserted_at"`
}

func (noopArgs) Kind() string { return "bench.noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	pickup *Latencies
	done   *int64
}

func (w *noopWorker) Work(_ context.Context, j *river.Job[noopArgs]) error {
	if w.pickup != nil {
		w.pickup.Add(time.Since(j.Args.InsertedAt))
	}
	atomic.AddInt64(w.done, 1)
	return nil
}

func newNoopClient(pool *pgxpool.Pool, cfg riverjob.Config, w *noopWorker) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	return river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:            nil,
		Workers:           workers,
		FetchCooldown:     cfg.FetchCooldown,
		FetchPollInterval: cfg.FetchPollInterval,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.MaxWorkers}},
	})
}

// RiverNoop measures River's raw throughput with the server's settings:
// n no-op jobs inserted in batches of 1,000 and worked, per second from the
// first insert to the last completion.
func RiverNoop(ctx context.Context, pool *pgxpool.Pool, cfg riverjob.Config, n int) (_ float64, err error) {
	var done int64
	client, err := newNoopClient(pool, cfg, &noopWorker{done: &done})
	if err != nil {
		return 0, err
	}
	if err := client.Start(ctx); err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, stopClient(client)) }()
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		batch := make([]river.InsertManyParams, 0, 1000)
		for j := i; j < n && j < i+1000; j++ {
			batch = append(batch, river.InsertManyParams{Args: noopArgs{InsertedAt: time.Now()}})
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return 0, fmt.Errorf("insert no-op jobs: %w", err)
		}
	}
	if err := waitCount(ctx, &done, int64(n), 5*time.Minute); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// RiverPickup measures River's own insert-to-work-start latency with the
// server's settings, inserting one job at a time at rate per second for d.
func RiverPickup(ctx context.Context, pool *pgxpool.Pool, cfg riverjob.Config, rate int, d time.Duration) (_ *Latencies, err error) {
	var done int64
	lat := &Latencies{}
	client, err := newNoopClient(pool, cfg, &noopWorker{done: &done, pickup: lat})
	if err != nil {
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopClient(client)) }()
	n := Pace(ctx, rate, d, func(int) {
		if _, err := client.Insert(ctx, noopArgs{InsertedAt: time.Now()}, nil); err != nil {
			return
		}
	})
	if err := waitCount(ctx, &done, int64(n), time.Minute); err != nil {
		return nil, err
	}
	return lat, nil
}

// Pace calls f rate times per second for d (each call in its own goroutine
// so a slow call does not slow the pace) and returns how many it started.
func Pace(ctx context.Context, rate int, d time.Duration, f func(i int)) int {
	interval := time.Second / time.Duration(rate)
	total := int(d / interval)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < total && ctx.Err() == nil; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		wg.Add(1)
		go func(i int) { defer wg.Done(); f(i) }(i)
	}
	wg.Wait()
	return total
}

func waitCount(ctx context.Context, c *int64, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for atomic.LoadInt64(c) < want {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("only %d of %d done within %s", atomic.LoadInt64(c), want, limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// stopClient stops a ceiling's River client once its figure is taken; a
// client still working would compete with the next measurement, so a
// failed stop is an error.
func stopClient(c *river.Client[pgx.Tx]) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		return fmt.Errorf("stop the ceiling's River client: %w", err)
	}
	return nil
}

// serve runs srv on ln until it is closed; the returned function closes it
// and returns what closing or serving failed with.
func serve(srv *http.Server, ln net.Listener) (closeFn func() error) {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return func() error {
		err := srv.Close()
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("serve %s: %w", ln.Addr(), serr))
		}
		return err
	}
}

// Receiver is a loopback HTTP server answering 204 and counting requests.
type Receiver struct {
	URL   string
	Count int64
	srv   *http.Server
	close func() error
	// OnRequest, when set, is called for each request before answering.
	OnRequest func(r *http.Request, body []byte)
}

// StartReceiver starts a bare 204 receiver on loopback.
func StartReceiver(onRequest func(r *http.Request, body []byte)) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &Receiver{URL: "http://" + ln.Addr().String() + "/hook", OnRequest: onRequest}
	rc.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if rc.OnRequest != nil {
			buf := make([]byte, 0, 512)
			b := make([]byte, 4096)
			for {
				n, err := r.Body.Read(b)
				buf = append(buf, b[:n]...)
				if err != nil {
					break
				}
			}
			body = buf
			rc.OnRequest(r, body)
		}
		atomic.AddInt64(&rc.Count, 1)
		w.WriteHeader(http.StatusNoContent)
	}), ReadHeaderTimeout: 5 * time.Second}
	rc.close = serve(rc.srv, ln)
	return rc, nil
}

// Close stops the receiver and returns what closing or serving failed with.
func (rc *Receiver) Close() error { return rc.close() }

// SerialSignPost is the W1 ceiling: one loop that signs each body with the
// Standard Webhooks headers and POSTs it to the receiver, one at a time.
func SerialSignPost(ctx context.Context, url string, bodies [][]byte) (float64, *Latencies, error) {
	secret, err := standardwebhooks.NewSecret()
	if err != nil {
		return 0, nil, err
	}
	msgs := make([]Message, len(bodies))
	for i, b := range bodies {
		msgs[i] = Message{ID: fmt.Sprintf("msg_%d", i), Body: b}
	}
	return SerialSign(ctx, url, secret, msgs)
}

// Message is one webhook to sign and send: its webhook-id and raw body.
type Message struct {
	ID   string
	Body []byte
}

// SerialSign is SerialSignPost with the secret and message ids given, so a
// verifying receiver (a Sink endpoint) checks the ceiling's requests exactly
// as it checks the server's. It returns requests per second and each POST's
// latency, in sending order.
func SerialSign(ctx context.Context, url, secret string, msgs []Message) (float64, *Latencies, error) {
	key, err := standardwebhooks.ParseSecret(secret)
	if err != nil {
		return 0, nil, err
	}
	client := NewClient(1)
	lat := &Latencies{}
	start := time.Now()
	for _, m := range msgs {
		now := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytesReader(m.Body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("content-type", "application/json")
		req.Header.Set("webhook-id", m.ID)
		req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		req.Header.Set("webhook-signature", standardwebhooks.Sign(key, m.ID, now, m.Body))
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body) // drained for reuse; the status is what counts
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return 0, nil, fmt.Errorf("serial ceiling: receiver answered %d", resp.StatusCode)
		}
		lat.Add(time.Since(t0))
	}
	return float64(len(msgs)) / time.Since(start).Seconds(), lat, nil
}

// ServeEcho starts handler on a loopback Echo server and returns its URL
// and a stop function, which returns what closing or serving failed with.
func ServeEcho(handler echo.HandlerFunc) (string, func() error, error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.POST("/hooks/bench", handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 5 * time.Second}
	return "http://" + ln.Addr().String() + "/hooks/bench", serve(srv, ln), nil
}

// EchoRiverHandler is the W4 ceiling handler: reads the body and commits one
// River job per request.
func EchoRiverHandler(pool *pgxpool.Pool, logger *zap.Logger) (echo.HandlerFunc, func(), error) {
	ins, err := riverjob.NewInserter(pool, 0, logger)
	if err != nil {
		return nil, nil, err
	}
	// The insert-only client refuses kinds it has no worker for only when it
	// has workers; it has none.
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck
		if _, err := ins.InsertTx(ctx, tx, noopArgs{InsertedAt: time.Now()}, &river.InsertOpts{Queue: "bench_unworked"}); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		return c.NoContent(http.StatusAccepted)
	}, func() {}, nil
}
