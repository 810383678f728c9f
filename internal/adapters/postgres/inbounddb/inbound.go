// Package inbounddb is the PostgreSQL adapter of the inbound webhook domain
// and its supplier connections: units of work over pgx transactions that
// hand out the sources, replay, inbox and connection stores, the processing
// job queue and the event Recorder bound to the same transaction. Storage
// errors are translated into the domain's: pgx.ErrNoRows becomes
// domain.ErrNotFound, a source still in use inbound.ErrSourceInUse.
package inbounddb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// querier runs statements: a pgx.Tx, or the pool for single statements.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// DB is what the adapter needs of PostgreSQL: a *pgxpool.Pool, or a pgx.Tx
// (units of work then run in savepoints of the caller's transaction).
type DB interface {
	querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

// BindJobsFunc returns the processing job queue bound to tx (the
// composition root passes the River adapter's InboundJobs.With).
type BindJobsFunc func(tx pgx.Tx) inbound.JobQueue

// BatchRecorder records events in a transaction and writes those recorded
// since the last Flush in one statement (events.Recorder.Batch).
type BatchRecorder interface {
	domain.Recorder
	Flush(ctx context.Context) error
}

// BindBatchRecorderFunc returns a BatchRecorder bound to tx (the
// composition root passes events.Recorder.Batch).
type BindBatchRecorderFunc func(tx pgx.Tx) BatchRecorder

// UnitOfWork implements inbound.UnitOfWork and inbound.SourceLookup.
type UnitOfWork struct {
	once   sync.Once
	st     *groupStates
	db     DB
	jobs   BindJobsFunc
	events BindBatchRecorderFunc
	kit    *uow.UnitOfWork[inbound.Tx]
}

var (
	_ inbound.UnitOfWork   = (*UnitOfWork)(nil)
	_ inbound.SourceLookup = (*UnitOfWork)(nil)
)

// New returns the inbound unit of work on db.
func New(db DB, jobs BindJobsFunc) *UnitOfWork {
	return &UnitOfWork{db: db, jobs: jobs, kit: uow.New(db, nil, func(tx pgx.Tx, _ domain.Recorder) inbound.Tx {
		return &txn{tx: tx, jobs: jobs(tx)}
	})}
}

// RecordWith makes Admit hand its hook a Recorder bound to the admitting
// transaction, whose events are written in one statement before the commit;
// without it the hook gets a nil Recorder. Call it before the first Admit.
func (u *UnitOfWork) RecordWith(bind BindBatchRecorderFunc) *UnitOfWork {
	u.events = bind
	return u
}

// Do runs fn in one transaction (uow.UnitOfWork.Do): committed when fn
// returns nil, fn's error returned as is.
func (u *UnitOfWork) Do(ctx context.Context, fn func(tx inbound.Tx) error) error {
	return u.kit.Do(ctx, fn)
}

// States returns the inbox's state changes outside any transaction
// (inbound.ProcessorDeps.Inbox): each one statement, which Begin and
// MarkDone share with the other runs beginning or finishing at the same
// time.
func (u *UnitOfWork) States() inbound.InboxStates {
	u.once.Do(func() { u.st = newGroupStates(u.db) })
	return u.st
}

// Lookup reads a source by id alone, outside any transaction (the gateway's
// first step, before the body is read).
func (u *UnitOfWork) Lookup(ctx context.Context, id uuid.UUID) (inbound.Source, error) {
	s, err := scanSource(u.db.QueryRow(ctx, `SELECT `+sourceColumns+` FROM inbound_sources WHERE id = $1`, id))
	if err != nil {
		return inbound.Source{}, unavailable(notFound(err, "look up inbound source"))
	}
	return s, nil
}

type txn struct {
	tx   pgx.Tx
	jobs inbound.JobQueue
}

func (t *txn) Sources() inbound.SourceStore { return sourceStore{t.tx} }
func (t *txn) Replays() inbound.ReplayStore { return replayStore{t.tx} }
func (t *txn) Inbox() inbound.InboxStore    { return inboxStore{t.tx} }
func (t *txn) Jobs() inbound.JobQueue       { return t.jobs }

// inTx runs fn in a transaction of db (uow.UnitOfWork.Do).
func inTx(ctx context.Context, db DB, fn func(tx pgx.Tx) error) error {
	return uow.New(db, nil, func(tx pgx.Tx, _ domain.Recorder) pgx.Tx { return tx }).Do(ctx, fn)
}

// notFound translates pgx.ErrNoRows into the domain's not-found error.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unavailable marks err as inbound.ErrUnavailable when PostgreSQL could not
// be reached or went away (connection refused or lost, the server shutting
// down or starting up), so the gateway answers 503 instead of 500.
func unavailable(err error) error {
	if err == nil || !pgerr.Unreachable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", inbound.ErrUnavailable, err)
}
