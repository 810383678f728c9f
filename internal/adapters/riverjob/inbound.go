package riverjob

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Job kinds of the inbound pipeline.
const (
	// InboundProcessKind runs the handlers of one inbox message.
	InboundProcessKind = "inbound.process"
	// InboundPurgeKind removes expired replay keys.
	InboundPurgeKind = "inbound.replay_purge"
)

// InboundProcessArgs are the args of a processing job: the inbox row's id.
// The row holds the message, so the job stays small.
type InboundProcessArgs struct {
	MessageID uuid.UUID `json:"message_id"`
}

// Kind implements river.JobArgs.
func (InboundProcessArgs) Kind() string { return InboundProcessKind }

// InsertOpts puts processing on the inbound queue with the inbound retry
// policy's 5 attempts. No River uniqueness: the inbox's unique index already admits one
// job per message, inside the same transaction, at no extra cost.
func (InboundProcessArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueInbound, MaxAttempts: inbound.DefaultRetryPolicy().MaxAttempts}
}

// InboundJobs enqueues processing jobs with the insert-only client.
type InboundJobs struct {
	ins *Inserter
}

// NewInboundJobs returns the inbound job queue factory.
func NewInboundJobs(ins *Inserter) *InboundJobs { return &InboundJobs{ins: ins} }

// With binds the queue to tx: jobs exist only if tx commits.
func (j *InboundJobs) With(tx pgx.Tx) inbound.JobQueue { return txQueue{ins: j.ins, tx: tx} }

type txQueue struct {
	ins *Inserter
	tx  pgx.Tx
}

func (q txQueue) EnqueueProcess(ctx context.Context, jobs ...inbound.ProcessJob) error {
	switch len(jobs) {
	case 0:
		return nil
	case 1:
		_, err := q.ins.InsertTx(ctx, q.tx, InboundProcessArgs{MessageID: jobs[0].MessageID}, processOpts(jobs[0]))
		return err
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: InboundProcessArgs{MessageID: j.MessageID}, InsertOpts: processOpts(j)}
	}
	_, err := q.ins.InsertManyFastTx(ctx, q.tx, params)
	return err
}

func processOpts(j inbound.ProcessJob) *river.InsertOpts {
	o := InboundProcessArgs{}.InsertOpts()
	if j.MaxAttempts > 0 {
		o.MaxAttempts = j.MaxAttempts
	}
	return &o
}

// InboundProcessWorker is the River worker around inbound.Processor. It maps
// the processor's outcomes: done or skipped → nil; retry → an error, with
// NextRetry returning the policy's time; dead → river.JobCancel, which ends
// the job without spending the attempts left; abandoned (the client is
// stopping) → river.JobSnooze(0), which gives the job back with its attempt
// not counted.
type InboundProcessWorker struct {
	river.WorkerDefaults[InboundProcessArgs]
	proc *inbound.Processor
	log  *zap.Logger
	// retryAt carries the policy's decision from Work to NextRetry, which
	// River calls right after Work returns, with the same job.
	retryAt sync.Map // job id → time.Time
}

// NewInboundProcessWorker returns the worker.
func NewInboundProcessWorker(proc *inbound.Processor, log *zap.Logger) *InboundProcessWorker {
	if log == nil {
		log = zap.NewNop()
	}
	return &InboundProcessWorker{proc: proc, log: log}
}

// retryError is what Work returns for a retry; River records the handler's
// error text through it.
type retryError struct{ err error }

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// Work processes one message.
func (w *InboundProcessWorker) Work(ctx context.Context, job *river.Job[InboundProcessArgs]) error {
	out, err := w.proc.Process(ctx, job.Args.MessageID, inbound.Job{ID: job.ID, Attempt: job.Attempt, MaxAttempts: job.MaxAttempts})
	if err != nil {
		if abandoned(ctx) {
			return river.JobSnooze(0)
		}
		return err // River retries with its own policy: the inbox itself failed
	}
	switch out.Kind {
	case inbound.OutcomeAbandoned:
		if errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely) {
			return out.Err // River cancels the job, as asked
		}
		w.log.Info("inbound message abandoned by a stopping worker; it runs again without spending an attempt",
			zap.String("message", job.Args.MessageID.String()), zap.Int("attempt", out.Attempt))
		return river.JobSnooze(0)
	case inbound.OutcomeRetry:
		w.retryAt.Store(job.ID, out.RetryAt)
		w.log.Info("inbound message failed; retrying",
			zap.String("message", job.Args.MessageID.String()), zap.Int("attempt", out.Attempt),
			zap.Duration("delay", out.Delay), zap.Error(out.Err))
		return &retryError{err: out.Err}
	case inbound.OutcomeDead:
		w.log.Warn("inbound message is a dead letter",
			zap.String("message", job.Args.MessageID.String()), zap.Int("attempt", out.Attempt), zap.Error(out.Err))
		return river.JobCancel(out.Err)
	}
	return nil
}

// abandoned reports whether the run's context was cancelled by a stopping
// client rather than timed out or cancelled through River: such a run gives
// its job back (River's JobSnooze(0): available again at once, its attempt
// not counted).
func abandoned(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled) && !errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely)
}

// NextRetry returns the time the retry policy chose for the failure Work
// just reported; zero (River's default policy) when Work failed on the inbox
// itself.
func (w *InboundProcessWorker) NextRetry(job *river.Job[InboundProcessArgs]) time.Time {
	if v, ok := w.retryAt.LoadAndDelete(job.ID); ok {
		return v.(time.Time)
	}
	return time.Time{}
}

// InboundPurgeArgs are the args of the inbound upkeep: expired replay keys
// and processed messages past the retention.
type InboundPurgeArgs struct{}

// Kind implements river.JobArgs.
func (InboundPurgeArgs) Kind() string { return InboundPurgeKind }

// InsertOpts keep one purge queued or running at a time.
func (InboundPurgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueDefault,
		MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled,
		}},
	}
}

// InboundMaintainFunc runs the inbound upkeep (inbound.Service.Maintain)
// and returns how many replay keys and messages it deleted.
type InboundMaintainFunc func(ctx context.Context) (replayKeys, messages int64, err error)

// InboundPurgeWorker runs the upkeep.
type InboundPurgeWorker struct {
	river.WorkerDefaults[InboundPurgeArgs]
	maintain InboundMaintainFunc
	log      *zap.Logger
}

// NewInboundPurgeWorker returns the upkeep worker.
func NewInboundPurgeWorker(maintain InboundMaintainFunc, log *zap.Logger) *InboundPurgeWorker {
	if log == nil {
		log = zap.NewNop()
	}
	return &InboundPurgeWorker{maintain: maintain, log: log}
}

// Work deletes every expired replay key and every processed message past
// the retention.
func (w *InboundPurgeWorker) Work(ctx context.Context, _ *river.Job[InboundPurgeArgs]) error {
	keys, messages, err := w.maintain(ctx)
	if keys > 0 || messages > 0 {
		w.log.Debug("inbound upkeep", zap.Int64("replay_keys", keys), zap.Int64("messages", messages))
	}
	return err
}

// InboundPurgeInterval is how often the inbound upkeep runs.
const InboundPurgeInterval = 5 * time.Minute

// InboundPeriodicJobs returns the purge, every InboundPurgeInterval and once
// at start.
func InboundPeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(
		river.PeriodicInterval(InboundPurgeInterval),
		func() (river.JobArgs, *river.InsertOpts) { return InboundPurgeArgs{}, nil },
		&river.PeriodicJobOpts{ID: InboundPurgeKind, RunOnStart: true},
	)}
}

// RegisterInbound adds the inbound workers to workers.
func RegisterInbound(workers *river.Workers, proc *InboundProcessWorker, purge *InboundPurgeWorker) error {
	return errors.Join(river.AddWorkerSafely(workers, proc), river.AddWorkerSafely(workers, purge))
}
