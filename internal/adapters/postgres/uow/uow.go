// Package uow is the one transaction kit of the PostgreSQL adapters: a
// generic unit of work that runs a use case in one pgx transaction and hands
// it the domain's Tx, built by the adapter's bind function over that
// transaction and the event Recorder bound to it.
package uow

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/domain"
)

// Recorder binds the event Recorder to a transaction: an event recorded
// through it exists only if that transaction commits. The composition root
// adapts events.Recorder.With to it.
type Recorder func(tx pgx.Tx) domain.Recorder

// Beginner starts a transaction: a *pgxpool.Pool, or a pgx.Tx (the unit of
// work then runs in a savepoint of the caller's transaction).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

var _ Beginner = (*pgxpool.Pool)(nil)

// UnitOfWork runs functions of T, a domain's Tx, in pgx transactions. A
// domain's port `Do(ctx, func(tx X.Tx) error) error` is satisfied by
// *UnitOfWork[X.Tx].
type UnitOfWork[T any] struct {
	db   Beginner
	rec  Recorder
	bind func(tx pgx.Tx, rec domain.Recorder) T
}

// New returns a unit of work over db, usually the *pgxpool.Pool. Each Do
// begins a transaction, binds
// rec to it (rec may be nil for a domain that records no events; bind then
// gets a nil Recorder) and hands fn what bind builds from the two.
func New[T any](db Beginner, rec Recorder, bind func(tx pgx.Tx, rec domain.Recorder) T) *UnitOfWork[T] {
	return &UnitOfWork[T]{db: db, rec: rec, bind: bind}
}

// Do runs fn in one transaction: committed when fn returns nil, rolled back
// otherwise. fn's error is returned as is, so domain errors keep their kind;
// a failed rollback is joined to it, and a failed begin or commit is
// returned wrapped.
func (u *UnitOfWork[T]) Do(ctx context.Context, fn func(T) error) (err error) {
	tx, err := u.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// After Commit, Rollback reports only that the transaction is closed.
	// The rollback outlives a cancelled ctx so the connection goes back
	// clean.
	defer func() {
		if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && !errors.Is(rbErr, pgx.ErrTxClosed) {
			err = errors.Join(err, fmt.Errorf("roll back: %w", rbErr))
		}
	}()
	var rec domain.Recorder
	if u.rec != nil {
		rec = u.rec(tx)
	}
	if err := fn(u.bind(tx, rec)); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
