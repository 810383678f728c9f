package bench

import "time"

// ReceiverModel is what a receiver does with a delivery, as W5 builds it:
// the inputs of IdealDeliveries.
type ReceiverModel struct {
	// Latency is how long the receiver takes to answer (2xx, 500 or 429
	// alike).
	Latency time.Duration
	// MaxInFlight is the endpoint's max_in_flight: how many attempts it
	// serves at once.
	MaxInFlight int
	// FailRate, ThrottleRate and HangRate are the shares of attempts
	// answered 500, answered 429 (Retry-After), and left hanging until
	// Timeout; the rest are answered 2xx.
	FailRate, ThrottleRate, HangRate float64
	// Timeout is the endpoint's timeout_seconds: what a hanging attempt
	// costs.
	Timeout time.Duration
	// Down (nothing listens) and AlwaysFail (every answer 500) receivers
	// take nothing.
	Down, AlwaysFail bool
}

// Capacity is the deliveries per second the receiver can take: with
// MaxInFlight attempts at once, each holding a slot for its mean service
// time s = (1-HangRate)·Latency + HangRate·Timeout, and a share
// p = 1 - FailRate - ThrottleRate - HangRate of attempts answered 2xx
// (every other attempt is retried, so a delivery takes 1/p attempts), the
// receiver completes MaxInFlight·p/s deliveries a second. A 429's
// Retry-After and a 500's retry delay cost time, not a slot, so they do
// not lower it. Down and always-failing receivers take 0.
func (m ReceiverModel) Capacity() float64 {
	if m.Down || m.AlwaysFail || m.MaxInFlight <= 0 {
		return 0
	}
	p := 1 - m.FailRate - m.ThrottleRate - m.HangRate
	s := (1-m.HangRate)*m.Latency.Seconds() + m.HangRate*m.Timeout.Seconds()
	if p <= 0 || s <= 0 {
		return 0
	}
	return float64(m.MaxInFlight) * p / s
}

// IdealDeliveries is how many deliveries receivers could take in window
// when receiver i is offered offered[i] events: the sum over receivers of
// min(offered[i], Capacity·window). It is the yardstick of
// w5_delivered_vs_ideal_ratio: an engine that delivered every event a
// receiver could take, as fast as the receiver's own timings allow, gets
// 1. It assumes nothing of the engine (no pickup latency, no database), so
// it is an upper bound. A receiver without an offered count is offered 0.
func IdealDeliveries(receivers []ReceiverModel, offered []int, window time.Duration) float64 {
	var sum float64
	for i, m := range receivers {
		if i >= len(offered) {
			break
		}
		sum += min(float64(offered[i]), m.Capacity()*window.Seconds())
	}
	return sum
}

// IdealWaits is the least each request could wait before it reaches a
// receiver serving maxInFlight requests at once, in the order they were
// offered: request k is offered at offered[k] (ascending) and holds a slot
// for service[k]. It starts at offered[k] or when a slot frees, whichever
// is later, and its wait is the difference. It is the floor of W5's
// publish-to-first-request time: an engine with no pickup latency at all
// still queues a busy receiver's requests behind its slow and hanging
// answers.
func IdealWaits(offered []time.Time, service []time.Duration, maxInFlight int) []time.Duration {
	if maxInFlight < 1 {
		maxInFlight = 1
	}
	free := make([]time.Time, maxInFlight) // when each slot frees
	waits := make([]time.Duration, len(offered))
	for k, at := range offered {
		slot := 0
		for s := range free {
			if free[s].Before(free[slot]) {
				slot = s
			}
		}
		start := at
		if free[slot].After(start) {
			start = free[slot]
		}
		waits[k] = start.Sub(at)
		free[slot] = start.Add(service[k])
	}
	return waits
}
