package inbound_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

func TestRetryPolicyDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seed := inbound.DefaultRetryPolicy()
	long := inbound.RetryPolicy{MaxAttempts: 20, InitialDelay: 5 * time.Second, MaxDelay: time.Hour, Multiplier: 2}
	transient := inbound.Failure{Transient: true}
	cases := []struct {
		name      string
		policy    inbound.RetryPolicy
		attempt   int
		failure   inbound.Failure
		wantDead  bool
		wantDelay time.Duration
	}{
		{"first failure waits 5s", seed, 1, transient, false, 5 * time.Second},
		{"second failure waits 10s", seed, 2, transient, false, 10 * time.Second},
		{"third failure waits 20s", seed, 3, transient, false, 20 * time.Second},
		{"fourth failure waits 40s", seed, 4, transient, false, 40 * time.Second},
		{"fifth failure is a dead letter", seed, 5, transient, true, 0},
		{"a permanent failure is dead at once", seed, 1, inbound.Failure{}, true, 0},
		{"a longer Retry-After wins", seed, 1, inbound.Failure{Transient: true, RetryAfter: 30 * time.Second}, false, 30 * time.Second},
		{"a shorter Retry-After loses", seed, 3, inbound.Failure{Transient: true, RetryAfter: time.Second}, false, 20 * time.Second},
		{"the delay is capped at an hour", long, 12, transient, false, time.Hour},
		{"a Retry-After beyond the cap still wins", long, 12, inbound.Failure{Transient: true, RetryAfter: 2 * time.Hour}, false, 2 * time.Hour},
		{"no overflow far out", long, 19, transient, false, time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := c.policy.Decide(c.attempt, c.failure, now)
			require.Equal(t, c.wantDead, d.DeadLetter)
			require.Equal(t, c.wantDelay, d.Delay)
			if !c.wantDead {
				require.Equal(t, now.Add(c.wantDelay), d.RetryAt)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cause := errors.New("supplier said no")
	cases := []struct {
		name          string
		err           error
		wantTransient bool
		wantAfter     time.Duration
	}{
		{"a plain error is transient", cause, true, 0},
		{"permanent", inbound.Permanent(cause), false, 0},
		{"permanent behind a wrap", fmt.Errorf("handler: %w", inbound.Permanent(cause)), false, 0},
		{"retry-after", inbound.RetryAfter(cause, time.Minute), true, time.Minute},
		{"the longest hint in the chain", inbound.RetryAfter(inbound.RetryAfter(cause, time.Minute), time.Second), true, time.Minute},
		{"permanent with a hint stays permanent", inbound.RetryAfter(inbound.Permanent(cause), time.Minute), false, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := inbound.Classify(c.err)
			require.Equal(t, c.wantTransient, f.Transient)
			require.Equal(t, c.wantAfter, f.RetryAfter)
			require.ErrorIs(t, f.Err, cause)
		})
	}
}
