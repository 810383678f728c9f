package webhookdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
)

// Lane timing: a process renews its lane every LaneRenew for LaneTTL, so
// the others work a dead process's lane within about LaneTTL plus
// LaneRenew, and a live one may miss four renewals in a row. A lapsed lane
// with no job left is forgotten after LaneForget, once no fan-out that
// chose it can still commit (River's job timeout, plus a TTL): a job
// inserted into a forgotten lane would never be worked.
const (
	LaneRenew  = 2 * time.Second
	LaneTTL    = 5 * LaneRenew
	LaneForget = river.JobTimeoutDefault + LaneTTL
)

// LaneQueues adds and removes River queues worked by this process.
type LaneQueues interface {
	AddQueue(name string) error
	RemoveQueue(ctx context.Context, name string) error
}

// Lanes keeps this process's delivery lane, a River queue worked only here
// while its row in webhook_lanes is alive (see docs/design/delivery.md,
// Lanes), and works every lapsed lane that still has jobs until they are
// gone. A lane is a preference: the lease still decides who delivers.
type Lanes struct {
	store   *Store
	queues  LaneQueues
	name    string
	logger  *zap.Logger
	adopted map[string]bool
}

// NewLanes names this process's lane and adds its queue to the River
// client, before the client starts. With own false the process has no lane
// of its own and only works lapsed lanes.
func NewLanes(store *Store, queues LaneQueues, own bool, logger *zap.Logger) (*Lanes, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	l := &Lanes{store: store, queues: queues, logger: logger, adopted: map[string]bool{}}
	if !own {
		return l, nil
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("name this process's delivery lane: %w", err)
	}
	l.name = riverjob.QueueWebhooks + "_" + hex.EncodeToString(b[:])
	if err := queues.AddQueue(l.name); err != nil {
		return nil, fmt.Errorf("add delivery lane %s: %w", l.name, err)
	}
	return l, nil
}

// Name is this process's lane (a River queue name), empty when it has
// none.
func (l *Lanes) Name() string { return l.name }

// Start makes available the deliveries left pending (Store.ReleasePending)
// and makes the lane alive; the server calls it once its schema is
// migrated.
func (l *Lanes) Start(ctx context.Context) error {
	n, err := l.store.ReleasePending(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		l.logger.Info("made pending webhook deliveries available", zap.Int("deliveries", n))
	}
	return l.keep(ctx)
}

// Run renews the lane every LaneRenew until ctx is done, then marks it
// lapsed so the other processes take over its jobs at once.
func (l *Lanes) Run(ctx context.Context) error {
	t := time.NewTicker(LaneRenew)
	defer t.Stop()
	for {
		if err := l.keep(ctx); err != nil && ctx.Err() == nil {
			l.logger.Warn("webhook delivery lane not renewed", zap.String("lane", l.name), zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return l.lapse(ctx)
		case <-t.C:
		}
	}
}

func (l *Lanes) keep(ctx context.Context) error {
	rows, err := l.store.pool.Query(ctx, keepLanes, l.name, LaneTTL.String(), LaneForget.String())
	if err != nil {
		return fmt.Errorf("renew lane: %w", err)
	}
	var (
		lane      string
		jobs, old bool
		forget    []string
	)
	lapsed := map[string]bool{}
	if _, err := pgx.ForEachRow(rows, []any{&lane, &jobs, &old}, func() error {
		if jobs {
			lapsed[lane] = true
		} else if old {
			forget = append(forget, lane)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("renew lane: %w", err)
	}
	for lane := range lapsed {
		if !l.adopted[lane] {
			if err := l.queues.AddQueue(lane); err != nil {
				return fmt.Errorf("work lapsed lane %s: %w", lane, err)
			}
			l.adopted[lane] = true
			l.logger.Info("working a lapsed webhook delivery lane", zap.String("lane", lane))
		}
	}
	for lane := range l.adopted {
		if lapsed[lane] {
			continue
		}
		// Its jobs are done, or its process is back.
		if err := l.queues.RemoveQueue(ctx, lane); err != nil {
			return fmt.Errorf("stop working lane %s: %w", lane, err)
		}
		delete(l.adopted, lane)
	}
	if len(forget) > 0 {
		if _, err := l.store.pool.Exec(ctx, `DELETE FROM webhook_lanes WHERE lane = ANY($1) AND alive_until < now() - $2::interval`,
			forget, LaneForget.String()); err != nil {
			return fmt.Errorf("forget lapsed lanes: %w", err)
		}
	}
	return nil
}

// lapse marks this process's lane lapsed as Run ends (ctx done). Its write
// is bounded by LaneRenew: a lane it fails to mark lapses by itself within
// LaneTTL.
func (l *Lanes) lapse(ctx context.Context) error {
	if l.name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LaneRenew)
	defer cancel()
	if _, err := l.store.pool.Exec(ctx, `UPDATE webhook_lanes SET alive_until = now() WHERE lane = $1`, l.name); err != nil {
		return fmt.Errorf("hand lane %s over: %w", l.name, err)
	}
	return nil
}
