package riverjob

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/infra/events"
)

// CorpusIndexArgs are the args the relay inserts for corpus.index:
// {"event_id": …}.
type CorpusIndexArgs struct {
	events.EventJobArgs
}

// Kind implements river.JobArgs.
func (CorpusIndexArgs) Kind() string { return corpus.IndexSubscriberName }

// CorpusIndexWorker runs the corpus.index subscriber: the domain handler
// decides, this wrapper maps its outcome to River — nil completes, an
// unprocessable event is cancelled (no retry can fix its payload), any
// other error is retried by River with its default backoff.
type CorpusIndexWorker struct {
	river.WorkerDefaults[CorpusIndexArgs]
	Indexer *corpus.Indexer
}

// Timeout leaves room for re-indexing a large subtree after a move.
func (w *CorpusIndexWorker) Timeout(*river.Job[CorpusIndexArgs]) time.Duration {
	return 2 * time.Minute
}

// Work indexes the notes one event is about.
func (w *CorpusIndexWorker) Work(ctx context.Context, job *river.Job[CorpusIndexArgs]) error {
	err := w.Indexer.Handle(ctx, job.Args.EventID)
	if errors.Is(err, corpus.ErrUnprocessableEvent) {
		return river.JobCancel(err)
	}
	return err
}

// RegisterCorpus adds the corpus workers.
func RegisterCorpus(workers *river.Workers, index *CorpusIndexWorker) error {
	return river.AddWorkerSafely(workers, index)
}
