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
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// RecorderFunc binds the event recorder to a transaction (events.Recorder's
// With, adapted by the composition root).
type RecorderFunc func(tx pgx.Tx) domain.Recorder

// UnitOfWork runs corpus use cases in pgx transactions.
type UnitOfWork struct {
	pool     *pgxpool.Pool
	recorder RecorderFunc
}

var _ corpus.UnitOfWork = (*UnitOfWork)(nil)

// NewUnitOfWork returns a unit of work over pool whose Tx records events with
// recorder(tx).
func NewUnitOfWork(pool *pgxpool.Pool, recorder RecorderFunc) *UnitOfWork {
	return &UnitOfWork{pool: pool, recorder: recorder}
}

// Do implements corpus.UnitOfWork: fn runs in one transaction, committed
// when it returns nil and rolled back otherwise.
func (u *UnitOfWork) Do(ctx context.Context, fn func(tx corpus.Tx) error) error {
	return pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		return fn(&txStores{tx: tx, rec: u.recorder(tx)})
	})
}

type txStores struct {
	tx  pgx.Tx
	rec domain.Recorder
}

func (t *txStores) Notes() corpus.NoteStore    { return &noteStore{tx: t.tx} }
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
