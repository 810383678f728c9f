package webhookdb

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// HoldPromotions takes every turn of the promotions in flight, as that
// many promotions running would, until the returned function is called.
func (s *Store) HoldPromotions() (release func()) {
	for range maxPromotions {
		s.promoting <- struct{}{}
	}
	return func() {
		for range maxPromotions {
			<-s.promoting
		}
	}
}

// OnPromote calls fn before each promotion of s makes its i-th delivery
// available; an error from fn fails the promotion there.
func (s *Store) OnPromote(fn func(i int) error) { s.promoted = fn }

// PromoteChunk is promoteChunk.
const PromoteChunk = promoteChunk

// TakePlan returns the plan takeChain gets for the endpoint in a
// promotion's first transaction, after holdChain, and enable_sort as
// River's calls after takeChain find it. The transaction is rolled back.
func (s *Store) TakePlan(ctx context.Context, endpointID uuid.UUID) (plan, sortAfter string, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return "", "", err
	}
	defer conn.Release()
	defer func() {
		_, uerr := conn.Exec(ctx, releaseChain, endpointID)
		err = errors.Join(err, uerr)
	}()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", "", err
	}
	defer func() { err = errors.Join(err, tx.Rollback(ctx)) }()
	if _, err := tx.Exec(ctx, holdChain, endpointID); err != nil {
		return "", "", err
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+takeChain, endpointID, delivery.ChainWindow, false)
	if err != nil {
		return "", "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", "", err
	}
	var ids []int64
	if err := tx.QueryRow(ctx, takeChain, endpointID, delivery.ChainWindow, false).Scan(&ids); err != nil {
		return "", "", err
	}
	if err := tx.QueryRow(ctx, "SHOW enable_sort").Scan(&sortAfter); err != nil {
		return "", "", err
	}
	return strings.Join(lines, "\n"), sortAfter, nil
}

// SweepTurn is the statement that takes the sweep's turn, for a test
// session to hold it as a sweep in another process would.
var SweepTurn = sweepTurn

// SweepPlan returns the plan the sweep's listing gets, run as SweepChains
// runs it.
func (s *Store) SweepPlan(ctx context.Context) (string, error) {
	var lines []string
	b := &pgx.Batch{}
	b.Queue(sweepPlanner)
	b.Queue("EXPLAIN " + sweepTurn).Query(func(rows pgx.Rows) error {
		var err error
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return "", err
	}
	return strings.Join(lines, "\n"), nil
}
