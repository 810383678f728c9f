package riverjob

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// WebhookFanoutArgs are the args the relay inserts for webhook.fanout:
// {"event_id": …}.
type WebhookFanoutArgs struct {
	events.EventJobArgs
}

// Kind implements river.JobArgs.
func (WebhookFanoutArgs) Kind() string { return delivery.KindFanout }

// WebhookDeliverArgs are one delivery: {"endpoint_id", "event_id"}. The job
// is unique by both, so a fan-out that runs twice (River runs a job at least
// once) queues each delivery once; the uniqueness lasts as long as River
// keeps the completed job, which is the event retention window.
type WebhookDeliverArgs struct {
	EndpointID uuid.UUID `json:"endpoint_id" river:"unique"`
	EventID    uuid.UUID `json:"event_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (WebhookDeliverArgs) Kind() string { return delivery.KindDeliver }

// InsertOpts puts deliveries on their own queue with MaxAttempts (18)
// attempts, unique by args in every state River keeps a job in.
//
// River's default unique states leave out cancelled and discarded, so a
// fan-out that ran after a delivery was cancelled (a 410) or discarded
// would queue the same (endpoint, event) again: webhooks.send_test queues
// its delivery itself and the fan-out of the same webhook.test event comes
// later, so a fast 410 would be followed by a second POST. A finished delivery
// is sent again only by Redeliver, which retries the same job.
func (WebhookDeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueWebhooks,
		MaxAttempts: delivery.MaxAttempts,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: deliveryUniqueStates},
	}
}

// deliveryUniqueStates is every job state: one delivery job per
// (endpoint, event) until River's cleaner deletes it.
var deliveryUniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
	rivertype.JobStateDiscarded, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// WebhookFanoutWorker runs the fan-out handler.
type WebhookFanoutWorker struct {
	river.WorkerDefaults[WebhookFanoutArgs]
	Fanouter *delivery.Fanouter
}

// Work fans one event out; an error lets River retry the whole fan-out,
// which is safe because deliveries are unique.
func (w *WebhookFanoutWorker) Work(ctx context.Context, job *river.Job[WebhookFanoutArgs]) error {
	_, err := w.Fanouter.Fanout(ctx, job.Args.EventID)
	return err
}

// WebhookDeliverWorker runs the delivery handler and maps its outcome to
// River: completed → nil, retryable → the error (River schedules the retry
// with NextRetry), snoozed → river.JobSnooze (no attempt spent), discarded
// → river.JobCancel (no further attempt, whatever remains).
type WebhookDeliverWorker struct {
	river.WorkerDefaults[WebhookDeliverArgs]
	Deliverer *delivery.Deliverer
	// BackoffScale divides the retry schedule (STANDMEET_WEBHOOK_BACKOFF_SCALE).
	BackoffScale float64
	Logger       *zap.Logger
}

// Timeout bounds a run: the 10 s POST fits inside with room for the lease
// and the settlement.
func (w *WebhookDeliverWorker) Timeout(*river.Job[WebhookDeliverArgs]) time.Duration {
	return delivery.JobTimeout
}

// NextRetry follows the delivery schedule (delivery.RetryDelay): 5 s, 5 min, 30 min, 2 h, 5 h,
// then 10 h, divided by BackoffScale.
func (w *WebhookDeliverWorker) NextRetry(job *river.Job[WebhookDeliverArgs]) time.Time {
	return time.Now().Add(delivery.RetryDelay(job.Attempt, w.BackoffScale, job.ID))
}

// erredLast reports whether River recorded an error for the job's
// previous attempt: its last error is that attempt's (River's rescuer
// records one for a run whose process died).
func erredLast(job *rivertype.JobRow) bool {
	return len(job.Errors) > 0 && job.Errors[len(job.Errors)-1].Attempt == job.Attempt-1
}

// Work runs one delivery.
func (w *WebhookDeliverWorker) Work(ctx context.Context, job *river.Job[WebhookDeliverArgs]) error {
	res := w.Deliverer.Deliver(ctx, delivery.DeliverJob{
		JobID: job.ID, EndpointID: job.Args.EndpointID, EventID: job.Args.EventID, Attempt: job.Attempt,
		MaxAttempts: job.MaxAttempts, PreviousErred: erredLast(job.JobRow),
	})
	if res.Warn != nil && w.Logger != nil {
		w.Logger.Warn("webhook delivery could not record its outcome",
			zap.Int64("job_id", job.ID), zap.Stringer("endpoint_id", job.Args.EndpointID), zap.Error(res.Warn))
	}
	return DeliverError(res)
}

// DeliverError maps a delivery result to what a River worker returns.
func DeliverError(res delivery.Result) error {
	switch res.Outcome {
	case delivery.OutcomeCompleted:
		return nil
	case delivery.OutcomeSnoozed:
		return river.JobSnooze(max(res.Snooze, 0))
	case delivery.OutcomeDiscarded:
		return river.JobCancel(orUnknown(res.Err))
	default:
		return orUnknown(res.Err)
	}
}

func orUnknown(err error) error {
	if err == nil {
		return fmt.Errorf("delivery failed")
	}
	return err
}

// WebhookPruneArgs are the args of the periodic prune of the delivery log.
type WebhookPruneArgs struct {
	// Retention is how long attempts are kept (the event retention).
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (WebhookPruneArgs) Kind() string { return "webhook.prune" }

// InsertOpts makes the prune unique while it waits, so periodic inserts on
// several replicas do not pile up.
func (WebhookPruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: time.Hour}}
}

// WebhookPruneWorker deletes delivery-log rows older than the retention,
// as River deletes the jobs they describe.
type WebhookPruneWorker struct {
	river.WorkerDefaults[WebhookPruneArgs]
	// PruneFunc deletes attempts recorded before the given time and
	// returns how many.
	PruneFunc func(ctx context.Context, before time.Time) (int64, error)
}

// Work prunes once.
func (w *WebhookPruneWorker) Work(ctx context.Context, job *river.Job[WebhookPruneArgs]) error {
	if job.Args.Retention <= 0 {
		return nil
	}
	_, err := w.PruneFunc(ctx, time.Now().Add(-job.Args.Retention))
	return err
}

// WebhookPrunePeriodic enqueues the prune every hour.
func WebhookPrunePeriodic(retention time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return WebhookPruneArgs{Retention: retention}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}

// RegisterWebhooks adds the outbound webhook workers.
func RegisterWebhooks(workers *river.Workers, fanout *WebhookFanoutWorker, deliver *WebhookDeliverWorker, prune *WebhookPruneWorker) error {
	for _, add := range []func() error{
		func() error { return river.AddWorkerSafely(workers, fanout) },
		func() error { return river.AddWorkerSafely(workers, deliver) },
		func() error { return river.AddWorkerSafely(workers, prune) },
	} {
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}
