package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

func TestSerialQueue(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	cases := []struct {
		name    string
		ready   []time.Duration
		service []time.Duration
		want    []time.Duration
	}{
		{"spread out: no queueing", []time.Duration{0, 10 * ms, 20 * ms}, []time.Duration{ms}, []time.Duration{ms, ms, ms}},
		{"burst: each waits for the ones before", []time.Duration{0, 0, 0}, []time.Duration{2 * ms}, []time.Duration{2 * ms, 4 * ms, 6 * ms}},
		{"service times cycle", []time.Duration{0, 0, 0}, []time.Duration{ms, 3 * ms}, []time.Duration{ms, 4 * ms, 5 * ms}},
		{"no service times", []time.Duration{0}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ready := make([]time.Time, len(c.ready))
			for i, d := range c.ready {
				ready[i] = t0.Add(d)
			}
			require.Equal(t, c.want, SerialQueue(ready, c.service).Values())
		})
	}
}

func TestParseMetric(t *testing.T) {
	t.Parallel()
	text := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 97\ngo_goroutines_extra 3\nx{a=\"b\"} 1\n"
	cases := []struct {
		name    string
		metric  string
		want    float64
		wantErr bool
	}{
		{"plain gauge", "go_goroutines", 97, false},
		{"prefix of another name is not confused", "go_goroutines_extra", 3, false},
		{"absent", "process_resident_memory_bytes", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseMetric(strings.NewReader(text), c.metric)
			if c.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestFigureRatio(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		f    Figure
		want float64
	}{
		{"throughput: value over ceiling", Figure{Value: 50, CeilingValue: 200}, 0.25},
		{"latency: ceiling over value", Figure{Value: 40, CeilingValue: 10, LowerIsBetter: true}, 0.25},
		{"no ceiling", Figure{Value: 5}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.InDelta(t, c.want, c.f.Ratio(), 1e-9)
		})
	}
}

// signed builds a request to url signed with secret as the server signs a
// delivery.
func signed(t *testing.T, url, secret, id, subject string) *http.Request {
	t.Helper()
	key, err := standardwebhooks.ParseSecret(secret)
	require.NoError(t, err)
	body := []byte(fmt.Sprintf(`{"id":%q,"type":"corpus.note.changed","subject":%q,"occurred_at":"2026-01-02T03:04:05.123Z","data":{}}`, id, subject))
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	now := time.Now()
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", standardwebhooks.Sign(key, id, now, body))
	return req
}

func TestSinkVerifiesAndRecords(t *testing.T) {
	t.Parallel()
	sink, err := StartSink("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sink.Close()) })
	secret, err := standardwebhooks.NewSecret()
	require.NoError(t, err)
	other, err := standardwebhooks.NewSecret()
	require.NoError(t, err)
	ep := sink.Endpoint("a", nil)
	require.NoError(t, ep.SetSecret(secret))
	committed := time.Now().Add(-time.Second)

	cases := []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"valid", signed(t, ep.URL, secret, "evt_1", "wiki://one"), http.StatusNoContent},
		{"valid again: a duplicate", signed(t, ep.URL, secret, "evt_1", "wiki://one"), http.StatusNoContent},
		{"another event", signed(t, ep.URL, secret, "evt_2", "wiki://two"), http.StatusNoContent},
		{"wrong secret", signed(t, ep.URL, other, "evt_3", "wiki://three"), http.StatusUnauthorized},
		{"unknown endpoint", signed(t, sink.URL+"/e/b", secret, "evt_4", "wiki://four"), http.StatusNotFound},
	}
	for _, c := range cases {
		resp, err := http.DefaultClient.Do(c.req)
		require.NoError(t, err, c.name)
		resp.Body.Close()
		require.Equal(t, c.status, resp.StatusCode, c.name)
	}
	require.EqualValues(t, 2, ep.OK(), "a duplicate is not a delivery")
	require.EqualValues(t, 2, ep.OKType("corpus.note.changed"))
	require.EqualValues(t, 1, ep.Duplicates())
	require.Zero(t, ep.OKType("webhook.test"))
	require.Equal(t, 1, ep.Invalid())
	require.Len(t, ep.Delivered(), 2)

	commits := newCommits()
	commits.add("wiki://one", committed)
	commits.add("wiki://two", committed)
	out := Tally([]*SinkEndpoint{ep}, commits)
	require.Equal(t, 2, out.Delivered)
	require.Equal(t, 1, out.Duplicates)
	require.Equal(t, 1, out.Invalid)
	require.EqualValues(t, 1, out.MaxInFlight)
	require.GreaterOrEqual(t, out.Latency.Percentile(50), time.Second)
}

func TestSinkCountsConcurrency(t *testing.T) {
	t.Parallel()
	sink, err := StartSink("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sink.Close()) })
	secret, err := standardwebhooks.NewSecret()
	require.NoError(t, err)
	// The handler holds each request until all three have arrived, so the
	// count is deterministic.
	var arrived sync.WaitGroup
	arrived.Add(3)
	ep := sink.Endpoint("c", func(w http.ResponseWriter, r *http.Request, _ int64) {
		arrived.Done()
		arrived.Wait()
		w.WriteHeader(http.StatusNoContent)
	})
	require.NoError(t, ep.SetSecret(secret))
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := http.DefaultClient.Do(signed(t, ep.URL, secret, fmt.Sprintf("evt_%d", i), "wiki://x"))
			if err == nil {
				resp.Body.Close()
			}
		}(i)
	}
	wg.Wait()
	require.EqualValues(t, 3, ep.MaxInFlight())
}

func TestStartSinkRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	_, err := StartSink("0.0.0.0:0")
	require.Error(t, err)
}

func TestDefaultRiverSettingsMatchTheServer(t *testing.T) {
	t.Parallel()
	got := DefaultRiverSettings()
	require.Equal(t, RiverSettings.MaxWorkers, got.MaxWorkers, "RiverSettings drifted from internal/infra/config's defaults")
	require.Equal(t, RiverSettings.FetchCooldown, got.FetchCooldown)
	require.Equal(t, RiverSettings.FetchPollInterval, got.FetchPollInterval)
}

func TestWaitOKReportsTheShortfall(t *testing.T) {
	t.Parallel()
	sink, err := StartSink("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sink.Close()) })
	ep := sink.Endpoint("w", nil)
	err = WaitOK(context.Background(), []*SinkEndpoint{ep}, noteEventType, []int64{2}, 0)
	require.ErrorContains(t, err, "2 deliveries to 1 endpoints still missing")
}

// TestAStepWithADuplicateOrAShortfallFails delivers three expected events
// to an endpoint in three ways: each once (the step passes), one of them
// twice (the duplicate does not make up for anything and fails the step),
// and one fewer (the shortfall fails it).
func TestAStepWithADuplicateOrAShortfallFails(t *testing.T) {
	t.Parallel()
	sink, err := StartSink("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sink.Close()) })
	cases := []struct {
		name     string
		send     []int
		wantWait string
		wantStep string
	}{
		{"every event once", []int{0, 1, 2}, "", ""},
		{"a duplicate", []int{0, 1, 1, 2}, "", "1 duplicate deliveries"},
		{"a duplicate in place of the third event", []int{0, 1, 1}, "1 deliveries to 1 endpoints still missing", "2 of 3 expected deliveries arrived"},
		{"one fewer", []int{0, 1}, "1 deliveries to 1 endpoints still missing", "2 of 3 expected deliveries arrived"},
		{"one more", []int{0, 1, 2, 3}, "1 deliveries beyond the 3 expected", "4 of 3 expected deliveries arrived"},
	}
	for ci, c := range cases {
		secret, err := standardwebhooks.NewSecret()
		require.NoError(t, err)
		ep := sink.Endpoint(fmt.Sprintf("dup-%d", ci), nil)
		require.NoError(t, ep.SetSecret(secret))
		commits := newCommits()
		for i := 0; i < 4; i++ {
			commits.add(fmt.Sprintf("wiki://%d", i), time.Now())
		}
		for _, i := range c.send {
			resp, err := http.DefaultClient.Do(signed(t, ep.URL, secret, fmt.Sprintf("evt_%d", i), fmt.Sprintf("wiki://%d", i)))
			require.NoError(t, err, c.name)
			resp.Body.Close()
		}
		err = WaitOK(context.Background(), []*SinkEndpoint{ep}, noteEventType, []int64{3}, 0)
		if c.wantWait == "" {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorContains(t, err, c.wantWait, c.name)
		}
		err = CheckDelivered(Tally([]*SinkEndpoint{ep}, commits), 3)
		if c.wantStep == "" {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorContains(t, err, c.wantStep, c.name)
		}
	}
}
