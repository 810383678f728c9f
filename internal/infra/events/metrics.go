package events

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the event bus's Prometheus metrics. A nil *Metrics is valid and
// records nothing, so tests and tools need not build one.
type Metrics struct {
	recorded       *prometheus.CounterVec
	fannedOut      *prometheus.CounterVec
	lagSeconds     prometheus.Gauge
	lagRows        prometheus.Gauge
	batchSize      prometheus.Histogram
	fanoutDelay    prometheus.Histogram
	poisonedTotal  prometheus.Counter
	poisonedNow    prometheus.Gauge
	relayFailures  prometheus.Counter
	wakeups        *prometheus.CounterVec
	pruned         prometheus.Counter
	notifyWakeups  prometheus.Counter
	pollWakeups    prometheus.Counter
	trailWakeups   prometheus.Counter
	startupWakeups prometheus.Counter
}

// NewMetrics creates the bus's metrics and registers them with reg (never
// the global registry, so two servers in one test process do not collide).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		recorded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standmeet_events_recorded_total",
			Help: "Events written by Record, by type (counted at write; the caller's transaction may still roll back).",
		}, []string{"type"}),
		fannedOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standmeet_events_fanned_out_total",
			Help: "Committed events fanned out by the relay, by type (both sources: Record and triggers).",
		}, []string{"type"}),
		lagSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "standmeet_events_relay_lag_seconds",
			Help: "Age of the oldest committed event not yet fanned out (0 when none).",
		}),
		lagRows: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "standmeet_events_relay_lag_rows",
			Help: "Committed events not yet fanned out (poisoned ones excluded).",
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "standmeet_events_fanout_batch_size",
			Help:    "Events claimed per relay fan-out transaction.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}),
		fanoutDelay: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "standmeet_events_fanout_delay_seconds",
			Help:    "Time from an event's occurred_at to its fan-out.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		poisonedTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "standmeet_events_poisoned_total",
			Help: "Events this process poisoned after repeated relay failures.",
		}),
		poisonedNow: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "standmeet_events_poisoned",
			Help: "Events currently poisoned, awaiting release or pruning.",
		}),
		relayFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "standmeet_events_relay_failures_total",
			Help: "Per-event fan-out failures (each counts against the event).",
		}),
		wakeups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standmeet_events_relay_wakeups_total",
			Help: "Relay wake-ups by cause: notify (LISTEN standmeet_events), trail (the look NotifySpacing after a notify), poll (fallback timer) or start.",
		}, []string{"by"}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "standmeet_events_pruned_total",
			Help: "Events deleted by the retention job.",
		}),
	}
	m.notifyWakeups = m.wakeups.WithLabelValues("notify")
	m.pollWakeups = m.wakeups.WithLabelValues("poll")
	m.trailWakeups = m.wakeups.WithLabelValues("trail")
	m.startupWakeups = m.wakeups.WithLabelValues("start")
	for _, c := range []prometheus.Collector{
		m.recorded, m.fannedOut, m.lagSeconds, m.lagRows, m.batchSize, m.fanoutDelay,
		m.poisonedTotal, m.poisonedNow, m.relayFailures, m.wakeups, m.pruned,
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) incRecorded(eventType string) {
	if m != nil {
		m.recorded.WithLabelValues(eventType).Inc()
	}
}

func (m *Metrics) incFannedOut(eventType string) {
	if m != nil {
		m.fannedOut.WithLabelValues(eventType).Inc()
	}
}

func (m *Metrics) observeBatch(n int) {
	if m != nil {
		m.batchSize.Observe(float64(n))
	}
}

func (m *Metrics) observeDelay(seconds float64) {
	if m != nil && seconds >= 0 {
		m.fanoutDelay.Observe(seconds)
	}
}

func (m *Metrics) setLag(seconds float64, rows, poisoned int64) {
	if m != nil {
		m.lagSeconds.Set(seconds)
		m.lagRows.Set(float64(rows))
		m.poisonedNow.Set(float64(poisoned))
	}
}

func (m *Metrics) incFailure(poisoned bool) {
	if m != nil {
		m.relayFailures.Inc()
		if poisoned {
			m.poisonedTotal.Inc()
		}
	}
}

func (m *Metrics) incWakeup(by wakeCause) {
	if m == nil {
		return
	}
	switch by {
	case wakeNotify:
		m.notifyWakeups.Inc()
	case wakePoll:
		m.pollWakeups.Inc()
	case wakeTrail:
		m.trailWakeups.Inc()
	default:
		m.startupWakeups.Inc()
	}
}

func (m *Metrics) addPruned(n int64) {
	if m != nil {
		m.pruned.Add(float64(n))
	}
}
