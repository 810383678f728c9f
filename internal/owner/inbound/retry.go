package inbound

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RetryPolicy is bounded exponential backoff without jitter, so the schedule is
// predictable and testable. River applies the decisions (the worker's
// NextRetry); the policy only makes them.
type RetryPolicy struct {
	// MaxAttempts is the number of handler runs before a transient failure
	// becomes a dead letter.
	MaxAttempts int
	// InitialDelay follows the first failed attempt.
	InitialDelay time.Duration
	// MaxDelay caps the computed delay (not a Retry-After hint).
	MaxDelay time.Duration
	// Multiplier grows the delay per attempt.
	Multiplier float64
}

// DefaultRetryPolicy returns the seed's policy: 5 attempts, 5 s initial delay,
// ×2 per attempt, capped at 1 h.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, InitialDelay: 5 * time.Second, MaxDelay: time.Hour, Multiplier: 2}
}

// Decision is what to do after a failed attempt.
type Decision struct {
	// DeadLetter ends the message's processing.
	DeadLetter bool
	// Delay and RetryAt say when to try again (zero when DeadLetter).
	Delay   time.Duration
	RetryAt time.Time
}

// Decide decides after attempt (counted from 1) failed with f at now:
//   - a permanent failure, or the last attempt, makes a dead letter;
//   - otherwise the delay is InitialDelay × Multiplier^(attempt-1), capped at
//     MaxDelay, and a longer Retry-After hint from the handler wins.
func (p RetryPolicy) Decide(attempt int, f Failure, now time.Time) Decision {
	if !f.Transient || attempt >= p.MaxAttempts {
		return Decision{DeadLetter: true}
	}
	exp := max(attempt-1, 0)
	computed := float64(p.InitialDelay) * math.Pow(p.Multiplier, float64(exp))
	delay := p.MaxDelay
	if computed < float64(p.MaxDelay) {
		delay = time.Duration(computed)
	}
	if f.RetryAfter > delay {
		delay = f.RetryAfter
	}
	return Decision{Delay: delay, RetryAt: now.Add(delay)}
}

// Failure is a handler's failure, classified.
type Failure struct {
	Err error
	// Transient failures are retried; others become dead letters at once.
	Transient bool
	// RetryAfter is the handler's (or its provider's) hint, zero for none.
	RetryAfter time.Duration
}

// HandlerError carries a handler's hints about its failure. Build it with
// Permanent or RetryAfter; any other error is a transient failure.
type HandlerError struct {
	Err        error
	Permanent  bool
	RetryAfter time.Duration
}

// Error implements error.
func (e *HandlerError) Error() string {
	if e.Err == nil {
		return "handler failed"
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *HandlerError) Unwrap() error { return e.Err }

// Permanent marks err as a failure that retrying cannot fix (a payload the
// handler can never accept): the message goes to the dead letters at once.
func Permanent(err error) error { return &HandlerError{Err: err, Permanent: true} }

// RetryAfter marks err as transient with a hint to wait at least d (a
// provider's Retry-After); the policy's own delay wins when it is longer.
func RetryAfter(err error, d time.Duration) error { return &HandlerError{Err: err, RetryAfter: d} }

// Classify turns a handler's error into a Failure: transient unless marked
// Permanent, with the longest Retry-After hint in the chain.
func Classify(err error) Failure {
	f := Failure{Err: err, Transient: true}
	var he *HandlerError
	for e := err; errors.As(e, &he); e = he.Err {
		if he.Permanent {
			f.Transient = false
		}
		if he.RetryAfter > f.RetryAfter {
			f.RetryAfter = he.RetryAfter
		}
	}
	return f
}

// panicError is a handler panic turned into a transient failure, so one bad
// handler cannot take the worker down.
func panicError(v any) error { return fmt.Errorf("handler panicked: %v", v) }
