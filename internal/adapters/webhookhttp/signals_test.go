package webhookhttp

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

func TestSignalsCountEveryAttemptAndLogEachFailureWithoutSecrets(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	reg := prometheus.NewRegistry()
	s, err := NewSignals(reg, zap.New(core))
	require.NoError(t, err)

	ep := uuid.New()
	job := func(n int) delivery.DeliverJob {
		return delivery.DeliverJob{JobID: 7, EndpointID: ep, EventID: uuid.New(), Attempt: n}
	}
	posted := func(code int, ms int) *delivery.Attempt {
		return &delivery.Attempt{StatusCode: code, Latency: time.Duration(ms) * time.Millisecond,
			Response: "receiver body", Error: `connection failed: Post "http://h/x?token=s3cret"`}
	}
	s.Observe(job(1), delivery.Result{Outcome: delivery.OutcomeCompleted, Posted: posted(204, 5), Of: 18, Class: "2xx"})
	s.Observe(job(1), delivery.Result{Outcome: delivery.OutcomeRetryable, Posted: posted(500, 40), Of: 3, Class: "5xx"})
	s.Observe(job(3), delivery.Result{Outcome: delivery.OutcomeDiscarded, Posted: posted(0, 1000), Of: 3, Class: delivery.ClassTimeout})
	// A run that never posted is no attempt.
	s.Observe(job(1), delivery.Result{Outcome: delivery.OutcomeDiscarded, Of: 3})

	fams, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	var observed uint64
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "standmeet_webhook_attempts_total":
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				counts[l["outcome"]+"/"+l["class"]] = m.GetCounter().GetValue()
			case "standmeet_webhook_attempt_seconds":
				observed += m.GetHistogram().GetSampleCount()
			}
		}
	}
	require.Equal(t, map[string]float64{"completed/2xx": 1, "retryable/5xx": 1, "discarded/timeout": 1}, counts)
	require.EqualValues(t, 3, observed)

	lines := logs.All()
	require.Len(t, lines, 2, "one line per failed attempt, none for the success")
	for i, want := range []struct {
		class, attempt string
		status         int64
	}{{"5xx", "1 of 3", 500}, {"timeout", "3 of 3", 0}} {
		e := lines[i]
		require.Equal(t, zapcore.WarnLevel, e.Level)
		f := e.ContextMap()
		require.Equal(t, ep.String(), f["endpoint_id"])
		require.Equal(t, want.class, f["class"])
		require.Equal(t, want.attempt, f["attempt"])
		if want.status != 0 {
			require.Equal(t, want.status, f["status"])
		} else {
			require.NotContains(t, f, "status")
		}
		for k, v := range f {
			s, _ := v.(string)
			require.NotContains(t, s, "s3cret", "field %s", k)
			require.NotContains(t, s, "receiver body", "field %s", k)
		}
	}
}
