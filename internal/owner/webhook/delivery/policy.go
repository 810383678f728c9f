package delivery

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Job kinds and the limits of delivery.
const (
	// KindFanout is the River kind of the fan-out job the relay inserts for
	// every Webhook-exposed event.
	KindFanout = "webhook.fanout"
	// KindDeliver is the River kind of one delivery.
	KindDeliver = "webhook.deliver"

	// MaxAttempts is the number of attempts of a delivery before River
	// discards it: with RetrySchedule, about 5.3 days.
	MaxAttempts = 18
	// JobTimeout bounds a delivery run; HTTPTimeout (the POST) fits inside
	// it with room for the lease, the event read and the settlement.
	JobTimeout = 15 * time.Second
	// HTTPTimeout bounds one POST, connect to last body byte.
	HTTPTimeout = 10 * time.Second
	// FinishTimeout bounds a write that must happen after its run's own
	// context is done: the statement that ends a run (its attempt, its
	// lease), a lease let go by a run that gives up, a wake.
	FinishTimeout = 5 * time.Second
	// LeaseTTL is how long a taken lease slot stays busy if its holder dies
	// without releasing it: a live holder's run ends by JobTimeout and
	// releases it within FinishTimeout, so it never loses its lease. A run
	// River still shows running after LeaseTTL is one whose process died.
	LeaseTTL = JobTimeout + FinishTimeout
	// LeaseRefresh is how long a lease may pass from hand to hand in one
	// process before it goes back to PostgreSQL, where other processes'
	// deliveries of the endpoint can take it and the endpoint is read
	// afresh. A POST started before then ends (HTTPTimeout) well inside
	// LeaseTTL, and a change to the endpoint reaches its deliveries within
	// it.
	LeaseRefresh = time.Second
	// MaxRateWait is the longest a run holding a lease waits for its
	// endpoint's rate limit before it posts: no longer than a lease passes
	// from hand to hand, so a limited endpoint's runs wait in River
	// (snoozed), not in workers.
	MaxRateWait = LeaseRefresh
	// MaxResponseBytes is the most of a response body that is read.
	MaxResponseBytes = 64 << 10
	// ResponseExcerptBytes is the most of it kept in the delivery log.
	ResponseExcerptBytes = 1 << 10
	// Cooldown is how far out new deliveries to an endpoint failing for
	// CooldownAfter are scheduled, so a dead receiver is not hit once per
	// new event.
	Cooldown = 5 * time.Minute
	// CooldownAfter is how far into a failing streak (no success between)
	// a failure must come before the endpoint's new deliveries are cooled
	// down: the first retry's delay, so an endpoint is taken for down once
	// that retry has failed too. A receiver that fails now and then (a 500, a 429
	// or a timeout among successes) is cleared by its next success inside
	// it and keeps getting its events at once; one that is down is cooled
	// down before its failing deliveries slow the healthy endpoints.
	CooldownAfter = 5 * time.Second
	// DisableAfter is how long an endpoint may fail continuously before it
	// is disabled.
	DisableAfter = 5 * 24 * time.Hour
	// MaxRetryAfter caps the snooze a receiver can ask for with
	// Retry-After; MinRetryAfter keeps "Retry-After: 0" from spinning.
	MaxRetryAfter = time.Hour
	MinRetryAfter = time.Second
)

// RetrySchedule is the wait after each failed attempt: 5 s, 5 min, 30 min,
// 2 h, 5 h, then 10 h for every later one.
var retrySchedule = [...]time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour,
}

// RetryDelay returns how long River waits after failed attempt number
// attempt (1-based) before the next one. scale (≥ 1) divides the schedule
// so fault tests compress hours into milliseconds; jitterKey (the job id)
// adds a deterministic 0–9.9 % so endpoints that failed together do not
// retry in lockstep.
func RetryDelay(attempt int, scale float64, jitterKey int64) time.Duration {
	i := max(attempt-1, 0)
	i = min(i, len(retrySchedule)-1)
	d := float64(retrySchedule[i])
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

// verdict is how one POST ended, by the delivery diagram of
// docs/design/delivery.md.
type verdict struct {
	outcome Outcome
	// snooze is the wait of OutcomeSnoozed.
	snooze time.Duration
	// failure marks any non-success: it sets the endpoint's failing_since.
	failure bool
	// reason says why, for the job's error and the delivery log.
	reason string
	// location is a 3xx's Location header.
	location string
	// class is the answer's class for the operator's signals: 2xx..5xx,
	// or timeout, connection, blocked when there was no answer.
	class string
}

// classify maps a POST's result to the diagram's edges:
//
//	2xx                                  completed
//	429 / 503 with Retry-After           snoozed for it (capped; no attempt spent)
//	5xx, 408, 429, 3xx, timeout, network retryable
//	other 4xx (410 included), blocked    discarded
//
// Every outcome but 2xx is a failure of the endpoint.
func classify(resp PostResponse, err error, now time.Time) verdict {
	v := classifyAnswer(resp, err, now)
	switch {
	case errors.Is(err, ErrBlocked):
		v.class = ClassBlocked
	case errors.Is(err, ErrTimeout):
		v.class = ClassTimeout
	case err != nil:
		v.class = ClassConnection
	case resp.StatusCode >= 100 && resp.StatusCode <= 599:
		v.class = strconv.Itoa(resp.StatusCode/100) + "xx"
	default:
		v.class = "other"
	}
	return v
}

// The classes of an attempt that got no answer.
const (
	ClassTimeout    = "timeout"
	ClassConnection = "connection"
	ClassBlocked    = "blocked"
)

func classifyAnswer(resp PostResponse, err error, now time.Time) verdict {
	if err != nil {
		switch {
		case errors.Is(err, ErrBlocked):
			return verdict{outcome: OutcomeDiscarded, failure: true, reason: "blocked by the egress policy: " + err.Error()}
		case errors.Is(err, ErrTimeout):
			return verdict{outcome: OutcomeRetryable, failure: true, reason: "timeout: " + err.Error()}
		default:
			return verdict{outcome: OutcomeRetryable, failure: true, reason: "connection failed: " + err.Error()}
		}
	}
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
		loc := resp.Header.Get("Location")
		return verdict{outcome: OutcomeRetryable, failure: true, reason: status + " redirect (not followed)", location: loc}
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
		if secs > int64(MaxRetryAfter/time.Second) {
			secs = int64(MaxRetryAfter / time.Second)
		}
		d = time.Duration(secs) * time.Second
	} else if t, ok := parseHTTPDate(v); ok {
		d = t.Sub(now)
	} else {
		return 0, false
	}
	return min(max(d, MinRetryAfter), MaxRetryAfter), true
}

// httpDateLayouts are the three date forms HTTP/1.1 accepts (RFC 9110,
// section 5.6.7): IMF-fixdate, then the obsolete RFC 850 and asctime forms.
var httpDateLayouts = []string{"Mon, 02 Jan 2006 15:04:05 GMT", time.RFC850, time.ANSIC}

// parseHTTPDate reads an HTTP date in any of its three forms.
func parseHTTPDate(v string) (time.Time, bool) {
	for _, layout := range httpDateLayouts {
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
		_, size := lastRune(s)
		s = s[:len(s)-size]
	}
	return s
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		if s[i]&0xC0 != 0x80 {
			return rune(s[i]), len(s) - i
		}
	}
	return 0, 1
}
