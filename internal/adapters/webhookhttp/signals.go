package webhookhttp

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Signals turns delivery attempts into the operator's signals: on
// /metrics, standmeet_webhook_attempts_total{outcome, class} and
// standmeet_webhook_attempt_seconds{class}; in the log, one warn line per
// failed attempt naming the endpoint, the answer's class (and status), and
// the attempt n of m. Neither carries a URL, a header or a body: a URL may
// hold a token and the error text of a failed dial quotes it.
type Signals struct {
	attempts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	logger   *zap.Logger
}

// NewSignals registers the attempt metrics on reg; logger gets the failure
// lines.
func NewSignals(reg prometheus.Registerer, logger *zap.Logger) (*Signals, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	s := &Signals{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "standmeet", Subsystem: "webhook", Name: "attempts_total",
			Help: "Delivery attempts that reached the POST, by outcome (completed, retryable, snoozed, discarded) and class (2xx..5xx, timeout, connection, blocked).",
		}, []string{"outcome", "class"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "standmeet", Subsystem: "webhook", Name: "attempt_seconds",
			Help:    "Time from sending a delivery's POST to the end of the answer, by class.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"class"}),
		logger: logger,
	}
	for _, c := range []prometheus.Collector{s.attempts, s.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register webhook attempt metrics: %w", err)
		}
	}
	return s, nil
}

// Observe is a delivery.ObserveFunc.
func (s *Signals) Observe(job delivery.DeliverJob, res delivery.Result) {
	a := res.Posted
	if a == nil {
		return
	}
	s.attempts.WithLabelValues(string(res.Outcome), res.Class).Inc()
	s.latency.WithLabelValues(res.Class).Observe(a.Latency.Seconds())
	if res.Outcome == delivery.OutcomeCompleted {
		return
	}
	fields := []zap.Field{
		zap.Stringer("endpoint_id", job.EndpointID), zap.Int64("job_id", job.JobID), zap.Stringer("event_id", job.EventID),
		zap.String("class", res.Class), zap.String("outcome", string(res.Outcome)),
		zap.String("attempt", strconv.Itoa(job.Attempt)+" of "+strconv.Itoa(res.Of)),
		zap.Duration("latency", a.Latency),
	}
	if a.StatusCode != 0 {
		fields = append(fields, zap.Int("status", a.StatusCode))
	}
	if res.Outcome == delivery.OutcomeSnoozed {
		fields = append(fields, zap.Duration("retry_after", res.Snooze))
	}
	s.logger.Warn("webhook delivery attempt failed", fields...)
}
