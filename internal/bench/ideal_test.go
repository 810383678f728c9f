package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestIdealDeliveriesHandWorked checks IdealDeliveries on three receivers
// over a 10 s window, worked by hand:
//
//   - fast: 50 ms, max_in_flight 1, no failures: s = 0.05 s, p = 1,
//     capacity 1·1/0.05 = 20/s, 200 in 10 s; offered 150 → 150.
//   - flaky: 100 ms, max_in_flight 2, 10 % 500, 10 % 429, 10 % hanging
//     until a 2 s timeout: s = 0.9·0.1 + 0.1·2 = 0.29 s, p = 0.7,
//     capacity 2·0.7/0.29 = 4.8276/s, 48.276 in 10 s; offered 100 → 48.276.
//   - down: offered 40 → 0.
//
// Ideal: 150 + 48.276 + 0 = 198.276.
func TestIdealDeliveriesHandWorked(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	receivers := []ReceiverModel{
		{Latency: 50 * ms, MaxInFlight: 1, Timeout: 2 * time.Second},
		{Latency: 100 * ms, MaxInFlight: 2, FailRate: 0.1, ThrottleRate: 0.1, HangRate: 0.1, Timeout: 2 * time.Second},
		{Latency: 50 * ms, MaxInFlight: 1, Timeout: 2 * time.Second, Down: true},
	}
	require.InDelta(t, 20, receivers[0].Capacity(), 1e-9)
	require.InDelta(t, 2*0.7/0.29, receivers[1].Capacity(), 1e-9)
	require.Zero(t, receivers[2].Capacity())
	require.InDelta(t, 198.276, IdealDeliveries(receivers, []int{150, 100, 40}, 10*time.Second), 1e-3)

	// Always failing takes nothing; a missing offered count is 0.
	sick := ReceiverModel{Latency: 50 * ms, MaxInFlight: 4, AlwaysFail: true}
	require.Zero(t, IdealDeliveries([]ReceiverModel{sick, receivers[0]}, []int{10}, 10*time.Second))
}

// TestIdealWaitsHandWorked checks IdealWaits on requests worked by hand.
func TestIdealWaitsHandWorked(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	at := func(d ...time.Duration) []time.Time {
		ts := make([]time.Time, len(d))
		for i, x := range d {
			ts[i] = t0.Add(x)
		}
		return ts
	}
	for _, tc := range []struct {
		name        string
		offered     []time.Time
		service     []time.Duration
		maxInFlight int
		want        []time.Duration
	}{
		{
			// One slot: a 2 s hang at 0 holds the requests of 100 ms
			// and 150 ms: the first starts at 2 s (waits 1.9 s), the
			// second after its 40 ms answer, at 2.04 s (waits 1.89 s);
			// the one at 3 s finds the slot free.
			name: "one slot behind a hang", maxInFlight: 1,
			offered: at(0, 100*ms, 150*ms, 3000*ms),
			service: []time.Duration{2000 * ms, 40 * ms, 40 * ms, 40 * ms},
			want:    []time.Duration{0, 1900 * ms, 1890 * ms, 0},
		},
		{
			// Two slots: the second request takes the free slot at once;
			// the third waits for the first slot to free at 50 ms.
			name: "two slots", maxInFlight: 2,
			offered: at(0, 10*ms, 20*ms),
			service: []time.Duration{50 * ms, 500 * ms, 10 * ms},
			want:    []time.Duration{0, 0, 30 * ms},
		},
		{
			name: "no max_in_flight means one", maxInFlight: 0,
			offered: at(0, 0),
			service: []time.Duration{30 * ms, 30 * ms},
			want:    []time.Duration{0, 30 * ms},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, IdealWaits(tc.offered, tc.service, tc.maxInFlight))
		})
	}
}
