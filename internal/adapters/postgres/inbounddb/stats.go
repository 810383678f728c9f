package inbounddb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Stats implements inbound.StatsReader over the inbox and the refusals.
type Stats struct {
	pool *pgxpool.Pool
}

var _ inbound.StatsReader = (*Stats)(nil)

// NewStats returns the inbound charts' reader on pool.
func NewStats(pool *pgxpool.Pool) *Stats { return &Stats{pool: pool} }

// statsSQL buckets a window of the owner's sources in one statement, each
// part a range of an index by (source, time) read no further back than $3:
// accepted by inbound_messages_source_received_idx, dead letters by
// inbound_messages_source_dead_at_idx, refusals by
// inbound_refusals_source_refused_idx.
const statsSQL = `WITH s AS (
  SELECT id FROM inbound_sources WHERE owner_id = $1 AND ($2::uuid IS NULL OR id = $2)
), marks AS (
  SELECT 'accepted' AS kind, m.received_at AS at FROM s JOIN inbound_messages m
    ON m.source_id = s.id AND m.received_at >= $3 AND m.received_at < $4
  UNION ALL
  SELECT 'dead', m.dead_at FROM s JOIN inbound_messages m
    ON m.source_id = s.id AND m.dead_at >= $3 AND m.dead_at < $4
  UNION ALL
  SELECT 'refused', r.refused_at FROM s JOIN inbound_refusals r
    ON r.source_id = s.id AND r.refused_at >= $3 AND r.refused_at < $4
)
SELECT date_bin($5::interval, at, $3) AS b,
  count(*) FILTER (WHERE kind = 'accepted'),
  count(*) FILTER (WHERE kind = 'refused'),
  count(*) FILTER (WHERE kind = 'dead')
FROM marks GROUP BY 1 ORDER BY 1`

// Stats implements inbound.StatsReader.
func (s *Stats) Stats(ctx context.Context, ownerID uuid.UUID, sourceID *uuid.UUID, since, until time.Time, step time.Duration) ([]inbound.StatsBucket, error) {
	rows, err := s.pool.Query(ctx, statsSQL, ownerID, sourceID, since, until, step)
	if err != nil {
		return nil, fmt.Errorf("read inbound stats: %w", err)
	}
	var (
		out []inbound.StatsBucket
		b   inbound.StatsBucket
	)
	if _, err := pgx.ForEachRow(rows, []any{&b.At, &b.Accepted, &b.Refused, &b.DeadLettered}, func() error {
		out = append(out, b)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read inbound stats: %w", err)
	}
	return out, nil
}

// DeadLetters implements inbound.StatsReader: the dead letters waiting,
// counted index-only on inbound_messages_source_dead_at_idx (dead_at is set
// exactly while a message is dead: a replay clears it).
func (s *Stats) DeadLetters(ctx context.Context, ownerID uuid.UUID, sourceID *uuid.UUID) ([]inbound.DeadLetterCount, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.name, count(*)::int
FROM inbound_sources s JOIN inbound_messages m ON m.source_id = s.id AND m.dead_at IS NOT NULL
WHERE s.owner_id = $1 AND ($2::uuid IS NULL OR s.id = $2)
GROUP BY s.id, s.name ORDER BY 3 DESC, s.id LIMIT 100`, ownerID, sourceID)
	if err != nil {
		return nil, fmt.Errorf("count dead letters: %w", err)
	}
	var (
		out []inbound.DeadLetterCount
		c   inbound.DeadLetterCount
	)
	if _, err := pgx.ForEachRow(rows, []any{&c.SourceID, &c.Name, &c.Waiting}, func() error {
		out = append(out, c)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count dead letters: %w", err)
	}
	return out, nil
}
