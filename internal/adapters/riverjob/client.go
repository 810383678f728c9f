// Package riverjob adapts the domains' subscribers and jobs to River: it
// builds the River clients and wraps domain handlers as River workers.
//
// There are two clients on one pool. The Inserter has no workers: adapters
// use it to insert jobs inside a domain's transaction (InsertTx,
// InsertManyTx), which breaks the cycle "workers need to insert jobs, the
// working client needs the workers". The Worker client runs the queues.
package riverjob

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// Queue names. Deliveries get their own queue so a burst of internal work
// never starves outbound webhooks, and the other way round.
const (
	QueueDefault  = river.QueueDefault
	QueueWebhooks = "webhooks"
	QueueInbound  = "inbound"
	// QueueCorpus runs corpus.index. Index jobs of one owner take turns on
	// an advisory lock inside a transaction, so a burst of one owner's notes
	// would otherwise park up to MaxWorkers transactions on that lock, each
	// holding a pooled connection that deliveries and HTTP need.
	QueueCorpus = "corpus"
)

// CorpusWorkers is the corpus queue's worker count: owners indexed at
// once, and at most this many connections held waiting on one owner's
// lock.
const CorpusWorkers = 4

// Config tunes the working client. River's defaults cap throughput at
// MaxWorkers ÷ FetchCooldown and add tens of milliseconds of pickup latency;
// the server's defaults (a 10 ms fetch cooldown, a 250 ms poll) lift the cap
// and cut the latency (figures: docs/design/river.md).
type Config struct {
	MaxWorkers    int
	FetchCooldown time.Duration
	// FetchPollInterval is how often every queue looks for jobs without
	// being told. A job inserted starts by River's insert notification; the
	// poll finds the jobs no notification announces: a snoozed or retried
	// delivery come due, one woken with JobRetryTx, the last of a burst
	// whose notification the inserter's limiter folded into an earlier one.
	// Each poll is a fetch statement per queue and process, found or not.
	FetchPollInterval time.Duration
	// RescueAfter returns a killed replica's running jobs after minutes, not
	// River's default hour. It must exceed every job's timeout.
	RescueAfter time.Duration
	// Retention keeps completed and discarded jobs (the delivery log) as long
	// as events are kept.
	Retention time.Duration
	// ID names this client (a replica) in River's tables; empty = generated.
	ID string
	// PoolSize is the database pool's size. Queues whose jobs hold a
	// connection for their whole run (inbound processing) get at most about
	// that many workers: more only queue up for connections.
	PoolSize int
}

// Inserter is the insert-only River client.
type Inserter struct {
	*river.Client[pgx.Tx]
}

// Worker is the River client that works the queues.
type Worker struct {
	*river.Client[pgx.Tx]
	// laneWorkers is the worker count of each delivery lane it adds.
	laneWorkers int
}

// AddQueue adds a delivery lane (a queue of webhook.deliver jobs) that
// this client works with as many workers as the webhooks queue; added
// before Start, it is worked from the start.
func (w *Worker) AddQueue(name string) error {
	if err := w.Queues().Add(name, river.QueueConfig{MaxWorkers: w.laneWorkers}); err != nil {
		return fmt.Errorf("add queue %s: %w", name, err)
	}
	return nil
}

// RemoveQueue stops working a queue added with AddQueue, once its running
// jobs here have ended.
func (w *Worker) RemoveQueue(ctx context.Context, name string) error {
	if err := w.Queues().Remove(ctx, name); err != nil {
		return fmt.Errorf("remove queue %s: %w", name, err)
	}
	return nil
}

// DefaultInsertNotify is how often, at most, an inserter tells a queue's
// producers that jobs were inserted, unless told otherwise.
const DefaultInsertNotify = 10 * time.Millisecond

// NewInserter builds the insert-only client. notifyEvery (0:
// DefaultInsertNotify) is how often, at most, it sends River's insert
// notification per queue; it should match the workers' FetchCooldown.
// River takes it from the client's FetchCooldown, whose 100 ms default
// leaves most inserts of a steady stream to the workers' poll, which then
// delays each of an event's two River hops (relay to fan-out, fan-out to
// delivery) by up to the poll interval (figures: docs/design/river.md).
func NewInserter(pool *pgxpool.Pool, notifyEvery time.Duration, logger *zap.Logger) (*Inserter, error) {
	if notifyEvery <= 0 {
		notifyEvery = DefaultInsertNotify
	}
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: slogger(logger), FetchCooldown: notifyEvery})
	if err != nil {
		return nil, fmt.Errorf("build river inserter: %w", err)
	}
	return &Inserter{c}, nil
}

// NewWorker builds the working client with every registered worker and
// periodic job. It does not start it.
func NewWorker(pool *pgxpool.Pool, cfg Config, workers *river.Workers, periodic []*river.PeriodicJob, logger *zap.Logger) (*Worker, error) {
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = 100
	}
	perQueue := cfg.MaxWorkers
	// Deliveries hold no connection during the POST, so the webhooks queue
	// can run many workers; inbound handlers work in a transaction.
	inbound := perQueue
	if cfg.PoolSize > 0 && inbound > cfg.PoolSize {
		inbound = cfg.PoolSize
	}
	// The default queue's jobs (the fan-out, subscribers of the bus) each
	// hold a connection for their whole run. Left at MaxWorkers, a burst of
	// them queues on the pool ahead of the deliveries' short lease writes,
	// which are what a busy endpoint's rate depends on: leave half the pool
	// to everything else.
	general := perQueue
	if cfg.PoolSize > 0 {
		general = min(perQueue, max(4, cfg.PoolSize/2))
	}
	rc := &river.Config{
		ID:                          cfg.ID,
		Logger:                      slogger(logger),
		Workers:                     workers,
		PeriodicJobs:                periodic,
		FetchCooldown:               cfg.FetchCooldown,
		FetchPollInterval:           cfg.FetchPollInterval,
		RescueStuckJobsAfter:        cfg.RescueAfter,
		CompletedJobRetentionPeriod: cfg.Retention,
		DiscardedJobRetentionPeriod: cfg.Retention,
		CancelledJobRetentionPeriod: cfg.Retention,
		Queues:                      queueConfigs(general, perQueue, inbound),
	}
	c, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("build river worker client: %w", err)
	}
	return &Worker{Client: c, laneWorkers: perQueue}, nil
}

// queueConfigs gives each of the client's queues its workers; every queue
// polls at the client's FetchPollInterval.
func queueConfigs(general, perQueue, inbound int) map[string]river.QueueConfig {
	return map[string]river.QueueConfig{
		QueueDefault:  {MaxWorkers: general},
		QueueWebhooks: {MaxWorkers: perQueue},
		QueueInbound:  {MaxWorkers: inbound},
		QueueCorpus:   {MaxWorkers: min(CorpusWorkers, perQueue)},
	}
}

// Shutdown stops the working client within timeout: running jobs get the
// time to finish, then their contexts are cancelled.
func (w *Worker) Shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		hard, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel2()
		return w.Client.StopAndCancel(hard)
	}
	return nil
}

func slogger(l *zap.Logger) *slog.Logger {
	if l == nil {
		l = zap.NewNop()
	}
	// River logs a lot at debug and info; warnings and errors are what
	// operators need.
	core, err := zapcore.NewIncreaseLevelCore(l.Named("river").Core(), zapcore.WarnLevel)
	if err != nil {
		core = l.Core()
	}
	return slog.New(zapslog.NewHandler(core))
}
