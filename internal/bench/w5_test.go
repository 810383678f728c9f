package bench

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestW5AnswersRepeatAfterARestart: a receiver's answers are a seeded
// sequence that begins again at each phase, so the phases with and
// without the sick endpoints meet the same failures at each endpoint;
// another receiver's sequence differs.
func TestW5AnswersRepeatAfterARestart(t *testing.T) {
	t.Parallel()
	m := ReceiverModel{MaxInFlight: 1, FailRate: 0.3, ThrottleRate: 0.3}
	statuses := func(a *w5Answers) []int {
		respond := w5Respond(m, a)
		var out []int
		for i := 0; i < 64; i++ {
			rec := httptest.NewRecorder()
			respond(rec, httptest.NewRequest(http.MethodPost, "/", nil), int64(i))
			out = append(out, rec.Code)
		}
		return out
	}
	a := newW5Answers(7)
	first := statuses(a)
	require.Contains(t, first, http.StatusInternalServerError)
	require.Contains(t, first, http.StatusTooManyRequests)
	require.Contains(t, first, http.StatusNoContent)
	require.NotEqual(t, first, statuses(a), "the sequence goes on without a restart")
	a.restart()
	require.Equal(t, first, statuses(a), "a restart begins the same sequence")
	require.NotEqual(t, first, statuses(newW5Answers(8)), "each receiver has its own sequence")
}

// TestWindowP99sJudgeAHarmByMostWindows: a phase's typical p99 (the median
// of its windows' p99s) follows a slowdown that lasts the phase and not a
// stall that fills one window, which the pooled p99 takes whole.
func TestWindowP99sJudgeAHarmByMostWindows(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	// phase is 50 s of one sample every 10 ms, each taking base, and slow
	// for those begun in the seconds listed.
	phase := func(base, slow time.Duration, stalled ...int) []Timed {
		var out []Timed
		for i := 0; i < 5000; i++ {
			at := start.Add(time.Duration(i) * 10 * time.Millisecond)
			d := base
			if slices.Contains(stalled, int(at.Sub(start)/time.Second)) {
				d = slow
			}
			out = append(out, Timed{At: at, D: d})
		}
		return out
	}
	typical := func(s []Timed) time.Duration { return Median(WindowP99s(s, start, 50*time.Second, 5)) }
	pooled := func(s []Timed) time.Duration {
		var l Latencies
		for _, x := range s {
			l.Add(x.D)
		}
		return l.Percentile(99)
	}
	for _, tc := range []struct {
		name            string
		with, without   []Timed
		typicalWorse    bool
		pooledWorseOnly bool
	}{
		{"a harm over the whole phase", phase(80*time.Millisecond, 0), phase(40*time.Millisecond, 0), true, false},
		{"a harm in three windows of five", phase(40*time.Millisecond, 200*time.Millisecond, 2, 15, 33), phase(40*time.Millisecond, 0), true, false},
		{"a stall of one window in the phase with", phase(40*time.Millisecond, 200*time.Millisecond, 31), phase(40*time.Millisecond, 0), false, true},
		{"a stall of one window in the phase without", phase(40*time.Millisecond, 0), phase(40*time.Millisecond, 200*time.Millisecond, 4), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			worse := typical(tc.with) > typical(tc.without)
			require.Equal(t, tc.typicalWorse, worse, "typical %s against %s", typical(tc.with), typical(tc.without))
			if tc.pooledWorseOnly {
				require.Greater(t, pooled(tc.with), pooled(tc.without), "the pooled p99 takes the stalled window whole")
			}
		})
	}
}

func TestWindowP99sAndMedianEdges(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	s := []Timed{
		{At: start.Add(-time.Second), D: 7 * time.Millisecond},      // before the start: the first window
		{At: start.Add(5 * time.Second), D: 9 * time.Millisecond},   // second window of 4 s
		{At: start.Add(30 * time.Second), D: 11 * time.Millisecond}, // past the end: the last window
	}
	require.Equal(t, []time.Duration{7 * time.Millisecond, 9 * time.Millisecond, 0, 0, 11 * time.Millisecond},
		WindowP99s(s, start, 20*time.Second, 5))
	require.Equal(t, []time.Duration{11 * time.Millisecond}, WindowP99s(s, start, 20*time.Second, 0), "fewer than one window is one")
	require.Equal(t, time.Duration(0), Median(nil))
	require.Equal(t, 9*time.Millisecond, Median([]time.Duration{11 * time.Millisecond, 7 * time.Millisecond, 9 * time.Millisecond}))
	require.Equal(t, 8*time.Millisecond, Median([]time.Duration{11 * time.Millisecond, 7 * time.Millisecond, 9 * time.Millisecond, 1}))
}
