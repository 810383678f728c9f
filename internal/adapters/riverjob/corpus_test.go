package riverjob_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/corpusdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// corpusBundle is the corpus domain on PostgreSQL with the real relay and a
// running River client whose only worker is corpus.index.
type corpusBundle struct {
	pool      *pgxpool.Pool
	svc       *corpus.Service
	owner     uuid.UUID
	completed <-chan *river.Event
	done      int // corpus.index jobs seen completed so far
}

func setupCorpus(t *testing.T) *corpusBundle {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := testdb.New(t)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	uow := corpusdb.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) })

	workers := river.NewWorkers()
	require.NoError(t, riverjob.RegisterCorpus(workers, &riverjob.CorpusIndexWorker{Indexer: corpus.NewIndexer(uow)}))
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Workers:           workers,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		TestOnly:          true,
	})
	require.NoError(t, err)
	completed, cancelSub := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	t.Cleanup(cancelSub)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		if err := client.Stop(stopCtx); err != nil {
			t.Logf("stop the River client: %v", err)
		}
	})

	// The subscription as the composition root declares it.
	subs := []events.Subscription{{Kind: corpus.IndexSubscriberName, EventTypes: domain.ExpandGlobs(corpus.IndexSubscriberGlobs())}}
	relay, err := events.NewRelay(pool, client, subs, events.RelayOptions{PollInterval: time.Second})
	require.NoError(t, err)
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		if err := relay.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("relay: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-relayDone })

	owner := uuid.New()
	_, err = pool.Exec(ctx, `INSERT INTO owners (id, email, password_hash, created_at, updated_at) VALUES ($1, $2, 'x', now(), now())`,
		owner, owner.String()+"@example.test")
	require.NoError(t, err)
	return &corpusBundle{pool: pool, svc: corpus.NewService(uow), owner: owner, completed: completed}
}

// settle waits until River has completed one corpus.index job per
// corpus.note.changed event committed so far — every one of them reached the
// index through the trigger, the relay and River. A failed or cancelled job
// fails the test.
func (b *corpusBundle) settle(t *testing.T) {
	t.Helper()
	var want int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE type = $1 AND owner_id = $2`, domain.EventCorpusNoteChanged, b.owner).Scan(&want))
	deadline := time.After(30 * time.Second) // a bound on a hang, not a timing assertion
	for b.done < want {
		select {
		case ev := <-b.completed:
			require.Equal(t, river.EventKindJobCompleted, ev.Kind, "job %d %s: %v", ev.Job.ID, ev.Kind, ev.Job.Errors)
			require.Equal(t, corpus.IndexSubscriberName, ev.Job.Kind)
			b.done++
		case <-deadline:
			t.Fatalf("only %d of %d corpus.index jobs completed", b.done, want)
		}
	}
}

func (b *corpusBundle) search(t *testing.T, q string) map[uuid.UUID]string {
	t.Helper()
	hits, err := b.svc.SearchPublished(context.Background(), b.owner, q, 0)
	require.NoError(t, err)
	out := map[uuid.UUID]string{}
	for _, h := range hits {
		out[h.NoteID] = h.URI
	}
	return out
}

// TestCorpusIndexThroughRelayAndRiver: no write path calls the indexer; the
// trigger's events reach it through the relay and River, and the public
// index follows create, rename, move, unpublish and delete.
func TestCorpusIndexThroughRelayAndRiver(t *testing.T) {
	t.Parallel()
	b := setupCorpus(t)
	ctx := context.Background()
	create := func(parent *uuid.UUID, f corpus.Fields) corpus.Note {
		n, err := b.svc.Create(ctx, b.owner, corpus.CreateInput{Fields: f, ParentID: parent})
		require.NoError(t, err)
		return n
	}
	zoo := create(nil, corpus.Fields{Genre: corpus.GenreWiki, Title: "Zoo"})
	okapi := create(&zoo.ID, corpus.Fields{Genre: corpus.GenreWiki, Title: "Okapi", Body: "A forest giraffe.", Published: true, Lang: "en"})
	calf := create(&okapi.ID, corpus.Fields{Genre: corpus.GenreWiki, Title: "Calf", Body: "A young okapi.", Published: true})
	create(nil, corpus.Fields{Genre: corpus.GenreRaw, Title: "okapi sighting", Body: "okapi okapi"})
	create(nil, corpus.Fields{Genre: corpus.GenreWiki, Title: "Draft okapi"})
	haus := create(nil, corpus.Fields{Genre: corpus.GenreWiki, Title: "Häuser", Body: "Die Häuser am See.", Published: true, Lang: "de-AT"})
	b.settle(t)

	require.Equal(t, map[uuid.UUID]string{okapi.ID: "wiki://zoo/okapi", calf.ID: "wiki://zoo/okapi/calf"}, b.search(t, "okapi"),
		"create → searchable; raw and drafts are not")
	require.Equal(t, map[uuid.UUID]string{haus.ID: "wiki://häuser"}, b.search(t, "Haus"), "the German configuration stems Häuser to haus")
	require.Len(t, b.search(t, "giraffes"), 1, "English stemming for lang en")

	_, err := b.svc.Update(ctx, b.owner, zoo.ID, corpus.Patch{Title: ptr("Park")})
	require.NoError(t, err)
	b.settle(t)
	require.Equal(t, map[uuid.UUID]string{okapi.ID: "wiki://park/okapi", calf.ID: "wiki://park/okapi/calf"}, b.search(t, "okapi"),
		"renaming an unpublished parent re-indexes the published subtree")

	forest := create(nil, corpus.Fields{Genre: corpus.GenreWiki, Title: "Forest"})
	_, err = b.svc.Move(ctx, b.owner, okapi.ID, &forest.ID)
	require.NoError(t, err)
	b.settle(t)
	require.Equal(t, map[uuid.UUID]string{okapi.ID: "wiki://forest/okapi", calf.ID: "wiki://forest/okapi/calf"}, b.search(t, "okapi"),
		"re-parent → subtree paths updated")

	_, err = b.svc.SetPublished(ctx, b.owner, okapi.ID, false)
	require.NoError(t, err)
	b.settle(t)
	require.Equal(t, map[uuid.UUID]string{calf.ID: "wiki://forest/okapi/calf"}, b.search(t, "okapi"), "unpublish → gone")

	require.NoError(t, b.svc.Delete(ctx, b.owner, okapi.ID, true))
	b.settle(t)
	require.Empty(t, b.search(t, "okapi"), "delete → gone")

	var fanned int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2 AND fanned_out_at IS NULL`,
		b.owner, domain.EventCorpusNoteChanged).Scan(&fanned))
	require.Zero(t, fanned, "every change went through the relay")
}

func ptr[T any](v T) *T { return &v }
