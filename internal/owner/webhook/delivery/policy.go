package delivery

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Job kinds and the limits of delivery (see docs/design/delivery.md,
// Constants).
const (
	// KindFanout is the River kind of the fan-out job the relay inserts for
	// every Webhook-exposed event.
	KindFanout = "webhook.fanout"
	// KindDeliver is the River kind of one delivery.
	KindDeliver = "webhook.deliver"
	// MaxAttempts is a delivery's attempts before River discards it: with
	// retrySchedule, about 5.3 days.
	MaxAttempts = 18
	// JobTimeout bounds a delivery run: HTTPTimeout with room for the lease,
	// the event read and the finish.
	JobTimeout = 15 * time.Second
	// HTTPTimeout bounds one POST, connect to last body byte.
	HTTPTimeout = 10 * time.Second
	// FinishTimeout bounds a write that must happen after its run's context
	// is done: the finishing statement, a lease let go, a wake.
	FinishTimeout = 5 * time.Second
	// LeaseTTL is how long a slot stays taken if its holder dies: a live
	// holder releases it within JobTimeout + FinishTimeout, so a run River
	// still shows running after LeaseTTL is one whose process died.
	LeaseTTL = JobTimeout + FinishTimeout
	// LeaseRefresh is how long a lease may pass from hand to hand in one
	// process before it goes back to PostgreSQL, where other processes can
	// take it and a change to the endpoint is read.
	LeaseRefresh = time.Second
	// MaxRateWait is the longest a run holding a lease waits for its
	// endpoint's rate limit; a later start snoozes, so a limited endpoint's
	// runs wait in River, not in workers.
	MaxRateWait = LeaseRefresh
	// MaxResponseBytes is the most of a response body that is read.
	MaxResponseBytes = 64 << 10
	// ResponseExcerptBytes is the most of it kept in the delivery log.
	ResponseExcerptBytes = 1 << 10
	// Cooldown is how long an endpoint counts as down after a failure
	// CooldownAfter or more into its failing streak (no success between):
	// its new deliveries are scheduled that far out, queued ones snooze.
	Cooldown = 5 * time.Minute
	// CooldownAfter is the first retry's delay, so a receiver that fails now
	// and then is cleared by its next success before it counts as down.
	CooldownAfter = 5 * time.Second
	// DisableAfter is how long an endpoint may fail continuously before it
	// is disabled.
	DisableAfter = 5 * 24 * time.Hour
	// MaxRetryAfter caps the snooze a receiver can ask for with
	// Retry-After; MinRetryAfter keeps "Retry-After: 0" from spinning.
	MaxRetryAfter = time.Hour
	MinRetryAfter = time.Second
)

// retrySchedule is the wait after each failed attempt, the last repeated.
var retrySchedule = [...]time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour,
}

// RetryDelay returns how long River waits after failed attempt number
// attempt (1-based). scale (≥ 1) divides the schedule for fault tests;
// jitterKey (the job id) adds a deterministic 0–9.9 % so endpoints that
// failed together do not retry in lockstep.
func RetryDelay(attempt int, scale float64, jitterKey int64) time.Duration {
	d := float64(retrySchedule[min(max(attempt-1, 0), len(retrySchedule)-1)])
	if scale > 1 {
		d /= scale
	}
	jitter := float64(((jitterKey%100)+100)%100) / 1000
	return time.Duration(d * (1 + jitter))
}

// TotalRetryWindow is the sum of the waits between MaxAttempts attempts at
// scale 1, without jitter: about 5.3 days.
func TotalRetryWindow() time.Duration {
	var total time.Duration
	for a := 1; a < MaxAttempts; a++ {
		total += RetryDelay(a, 1, 0)
	}
	return total
}

// verdict is how one POST ended (see classify).
type verdict struct {
	outcome  Outcome
	snooze   time.Duration // the wait of OutcomeSnoozed
	failure  bool          // any non-success: it sets the endpoint's failing_since
	reason   string        // why, for the job's error and the delivery log
	location string        // a 3xx's Location header
	class    string        // 2xx..5xx, other, or a Class* for no answer
}

// ClassTimeout, ClassConnection and ClassBlocked are the classes of an
// attempt that got no answer.
const (
	ClassTimeout    = "timeout"
	ClassConnection = "connection"
	ClassBlocked    = "blocked"
)

// classify maps a POST's result to the edges of the delivery diagram in
// docs/design/delivery.md:
//
//	2xx                                  completed
//	429 / 503 with Retry-After           snoozed for it (capped; no attempt spent)
//	5xx, 408, 429, 3xx, timeout, network retryable
//	other 4xx (410 included), blocked    discarded
//
// Every outcome but 2xx is a failure of the endpoint.
func classify(resp PostResponse, err error, now time.Time) verdict {
	switch {
	case errors.Is(err, ErrBlocked):
		return verdict{outcome: OutcomeDiscarded, failure: true, reason: "blocked by the egress policy: " + err.Error(), class: ClassBlocked}
	case errors.Is(err, ErrTimeout):
		return verdict{outcome: OutcomeRetryable, failure: true, reason: "timeout: " + err.Error(), class: ClassTimeout}
	case err != nil:
		return verdict{outcome: OutcomeRetryable, failure: true, reason: "connection failed: " + err.Error(), class: ClassConnection}
	}
	v := classifyStatus(resp, now)
	v.class = "other"
	if resp.StatusCode >= 100 && resp.StatusCode <= 599 {
		v.class = strconv.Itoa(resp.StatusCode/100) + "xx"
	}
	return v
}

func classifyStatus(resp PostResponse, now time.Time) verdict {
	code := resp.StatusCode
	status := fmt.Sprintf("HTTP %d", code)
	switch {
	case code >= 200 && code <= 299:
		return verdict{outcome: OutcomeCompleted}
	case code == 429 || code == 503: // Too Many Requests, Service Unavailable
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			return verdict{outcome: OutcomeSnoozed, snooze: d, failure: true, reason: fmt.Sprintf("%s, Retry-After %s", status, d)}
		}
		return verdict{outcome: OutcomeRetryable, failure: true, reason: status}
	case code >= 300 && code <= 399:
		// Redirects are never followed (the target could be internal);
		// the receiver must register its final URL.
		return verdict{outcome: OutcomeRetryable, failure: true, reason: status + " redirect (not followed)", location: resp.Header.Get("Location")}
	case code >= 500 || code == 408: // 408 Request Timeout
		return verdict{outcome: OutcomeRetryable, failure: true, reason: status}
	case code >= 400:
		return verdict{outcome: OutcomeDiscarded, failure: true, reason: status}
	default:
		return verdict{outcome: OutcomeRetryable, failure: true, reason: status + " (unexpected status)"}
	}
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP date,
// clamped to MinRetryAfter..MaxRetryAfter.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		d = time.Duration(min(secs, int64(MaxRetryAfter/time.Second))) * time.Second
	} else if t, ok := parseHTTPDate(v); ok {
		d = t.Sub(now)
	} else {
		return 0, false
	}
	return min(max(d, MinRetryAfter), MaxRetryAfter), true
}

// parseHTTPDate reads an HTTP date in any of the three forms HTTP/1.1
// accepts: IMF-fixdate, then the obsolete RFC 850 and asctime forms.
func parseHTTPDate(v string) (time.Time, bool) {
	for _, layout := range []string{"Mon, 02 Jan 2006 15:04:05 GMT", time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// excerpt returns the start of a response body fit for the log: at most
// ResponseExcerptBytes, cut on a rune boundary, invalid UTF-8 and NUL
// replaced (PostgreSQL text refuses both).
func excerpt(b []byte) string {
	if len(b) > ResponseExcerptBytes {
		b = b[:ResponseExcerptBytes]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	for len(s) > ResponseExcerptBytes {
		// The replacements may have grown it; drop whole runes.
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
