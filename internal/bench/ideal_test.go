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
