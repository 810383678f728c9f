package webhookdb

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// StateCollector exports, at each scrape, the endpoints that are failing or
// disabled and the deliveries waiting, running, retrying and failed, read
// from the database in one statement: an operator's view of outbound
// health that needs no worker.
type StateCollector struct {
	pool      *pgxpool.Pool
	log       *zap.Logger
	endpoints *prometheus.Desc
	delivery  *prometheus.Desc
	up        *prometheus.Desc
}

var _ prometheus.Collector = (*StateCollector)(nil)

// NewStateCollector returns the collector; register it on the /metrics
// registry.
func NewStateCollector(pool *pgxpool.Pool, log *zap.Logger) *StateCollector {
	return &StateCollector{
		pool: pool, log: log,
		endpoints: prometheus.NewDesc("standmeet_webhook_endpoints",
			"Webhook endpoints by state: failing (enabled, deliveries failing) or disabled (deleted ones not counted).",
			[]string{"state"}, nil),
		delivery: prometheus.NewDesc("standmeet_webhook_deliveries",
			"Webhook deliveries by state: waiting (queued, not yet due or not yet picked), running, retrying "+
				"(failed, next attempt scheduled) and failed (discarded or cancelled, kept until the retention).",
			[]string{"state"}, nil),
		up: prometheus.NewDesc("standmeet_webhook_state_up",
			"1 when the last scrape read the webhook endpoint and delivery counts, 0 when the query failed.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *StateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.endpoints
	ch <- c.delivery
	ch <- c.up
}

// Collect implements prometheus.Collector: one query, bounded to 2 s.
func (c *StateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var failing, disabled, waiting, running, retrying, failed int64
	err := c.pool.QueryRow(ctx, stateSQL).Scan(&failing, &disabled, &waiting, &running, &retrying, &failed)
	if err != nil {
		c.log.Warn("read webhook state for /metrics", zap.Error(err))
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for state, n := range map[string]int64{"failing": failing, "disabled": disabled} {
		ch <- prometheus.MustNewConstMetric(c.endpoints, prometheus.GaugeValue, float64(n), state)
	}
	for state, n := range map[string]int64{"waiting": waiting, "running": running, "retrying": retrying, "failed": failed} {
		ch <- prometheus.MustNewConstMetric(c.delivery, prometheus.GaugeValue, float64(n), state)
	}
}
