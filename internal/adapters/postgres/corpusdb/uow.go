// Package corpusdb is the PostgreSQL adapter of the corpus domain: its unit of
// work over one pgx transaction, the note store (URIs computed by the SQL
// twin of the segment rule), the full-text index store and the event reader
// of the corpus.index subscriber.
package corpusdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// NewUnitOfWork returns the corpus domain's unit of work over pool; its Tx
// records events with rec bound to the transaction.
func NewUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[corpus.Tx] {
	return uow.New(pool, rec, func(tx pgx.Tx, rec domain.Recorder) corpus.Tx { return &txStores{tx: tx, rec: rec} })
}

type txStores struct {
	tx  pgx.Tx
	rec domain.Recorder
}

func (t *txStores) Notes() corpus.NoteStore {
	// The composition root binds events.TxRecorder, which wakes; a unit of
	// work without a Recorder leaves the trigger's events to the relay's poll.
	w, _ := t.rec.(relayWaker)
	return &noteStore{tx: t.tx, waker: w}
}
func (t *txStores) Index() corpus.IndexStore   { return &indexStore{tx: t.tx} }
func (t *txStores) Events() corpus.EventReader { return &eventReader{tx: t.tx} }
func (t *txStores) Recorder() domain.Recorder  { return t.rec }

// advisoryLock takes a transaction-scoped advisory lock named by key.
func advisoryLock(ctx context.Context, tx pgx.Tx, key string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("advisory lock %s: %w", key, err)
	}
	return nil
}

// translate maps storage errors to domain errors.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.NotFound("NOT_FOUND", "no such note")
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case pgerr.ForeignKeyViolation: // a parent vanished or has children
			if pgErr.ConstraintName == "corpus_notes_parent_fkey" && pgErr.TableName == "corpus_notes" {
				return domain.Conflict("NOTE_TREE_CHANGED", "the note's parent or children changed meanwhile; try again")
			}
		case pgerr.CheckViolation:
			return domain.Validation("INVALID_NOTE", "the note breaks a rule of the store: "+pgErr.ConstraintName)
		}
	}
	return err
}
