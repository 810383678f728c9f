package delivery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

func TestRetryScheduleSpansFiveDaysInEighteenAttempts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		attempt int
		want    time.Duration
	}{
		{1, 5 * time.Second},
		{2, 5 * time.Minute},
		{3, 30 * time.Minute},
		{4, 2 * time.Hour},
		{5, 5 * time.Hour},
		{6, 10 * time.Hour},
		{17, 10 * time.Hour},
		{40, 10 * time.Hour},
	}
	for _, c := range cases {
		require.Equal(t, c.want, RetryDelay(c.attempt, 1, 0), "attempt %d", c.attempt)
	}
	// 17 waits between 18 attempts: about 5.3 days.
	total := TotalRetryWindow()
	require.Equal(t, 5*time.Second+5*time.Minute+30*time.Minute+2*time.Hour+5*time.Hour+12*10*time.Hour, total)
	require.InDelta(t, 5.3, total.Hours()/24, 0.05)
}

func TestRetryDelayScalesAndJitters(t *testing.T) {
	t.Parallel()
	require.Equal(t, 36*time.Millisecond, RetryDelay(6, 1e6, 0))
	require.Equal(t, 5*time.Second, RetryDelay(1, 0.5, 0), "a scale below 1 is ignored")
	for key := int64(-250); key < 250; key++ {
		d := RetryDelay(2, 1, key)
		require.GreaterOrEqual(t, d, 5*time.Minute)
		require.Less(t, d, 5*time.Minute*110/100)
	}
	require.Equal(t, RetryDelay(3, 1, 42), RetryDelay(3, 1, 42), "jitter is deterministic per job")
}

func resp(code int, header ...string) PostResponse {
	h := domain.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return PostResponse{StatusCode: code, Header: h}
}

func TestClassifyFollowsTheDeliveryDiagram(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 27, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		resp    PostResponse
		err     error
		outcome Outcome
		snooze  time.Duration
		failure bool
	}{
		{"200", resp(200), nil, OutcomeCompleted, 0, false},
		{"204", resp(204), nil, OutcomeCompleted, 0, false},
		{"299", resp(299), nil, OutcomeCompleted, 0, false},
		{"500", resp(500), nil, OutcomeRetryable, 0, true},
		{"502", resp(502), nil, OutcomeRetryable, 0, true},
		{"503 without Retry-After", resp(503), nil, OutcomeRetryable, 0, true},
		{"503 with Retry-After", resp(503, "Retry-After", "7"), nil, OutcomeSnoozed, 7 * time.Second, true},
		{"408", resp(408), nil, OutcomeRetryable, 0, true},
		{"429 without Retry-After", resp(429), nil, OutcomeRetryable, 0, true},
		{"429 with Retry-After seconds", resp(429, "Retry-After", "30"), nil, OutcomeSnoozed, 30 * time.Second, true},
		{"429 with Retry-After date", resp(429, "Retry-After", now.Add(90*time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT")), nil, OutcomeSnoozed, 90 * time.Second, true},
		{"429 with an RFC 850 Retry-After date", resp(429, "Retry-After", now.Add(60*time.Second).Format(time.RFC850)), nil, OutcomeSnoozed, 60 * time.Second, true},
		{"429 with an asctime Retry-After date", resp(429, "Retry-After", now.Add(120*time.Second).Format(time.ANSIC)), nil, OutcomeSnoozed, 120 * time.Second, true},
		{"429 with Retry-After 0", resp(429, "Retry-After", "0"), nil, OutcomeSnoozed, MinRetryAfter, true},
		{"429 with a huge Retry-After", resp(429, "Retry-After", "999999999"), nil, OutcomeSnoozed, MaxRetryAfter, true},
		{"429 with garbage Retry-After", resp(429, "Retry-After", "soon"), nil, OutcomeRetryable, 0, true},
		{"500 with Retry-After is not snoozed", resp(500, "Retry-After", "5"), nil, OutcomeRetryable, 0, true},
		{"301", resp(301, "Location", "https://elsewhere.example/x"), nil, OutcomeRetryable, 0, true},
		{"307", resp(307), nil, OutcomeRetryable, 0, true},
		{"400", resp(400), nil, OutcomeDiscarded, 0, true},
		{"401", resp(401), nil, OutcomeDiscarded, 0, true},
		{"404", resp(404), nil, OutcomeDiscarded, 0, true},
		{"410", resp(410), nil, OutcomeDiscarded, 0, true},
		{"422", resp(422), nil, OutcomeDiscarded, 0, true},
		{"blocked", PostResponse{}, fmt.Errorf("dial: %w", ErrBlocked), OutcomeDiscarded, 0, true},
		{"timeout", PostResponse{}, fmt.Errorf("read: %w", ErrTimeout), OutcomeRetryable, 0, true},
		{"connection refused", PostResponse{}, errors.New("connect: connection refused"), OutcomeRetryable, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := classify(c.resp, c.err, now)
			require.Equal(t, c.outcome, v.outcome)
			require.Equal(t, c.snooze, v.snooze)
			require.Equal(t, c.failure, v.failure)
			if c.outcome != OutcomeCompleted {
				require.NotEmpty(t, v.reason)
			}
		})
	}
	v := classify(resp(302, "Location", "http://10.0.0.1/"), nil, now)
	require.Equal(t, "http://10.0.0.1/", v.location, "a 3xx records its Location")
}

func TestExcerptIsBoundedValidText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "ok", excerpt([]byte("ok")))
	long := strings.Repeat("é", 2000)
	e := excerpt([]byte(long))
	require.LessOrEqual(t, len(e), ResponseExcerptBytes)
	require.True(t, utf8.ValidString(e))
	e = excerpt([]byte("a\x00b\xff"))
	require.True(t, utf8.ValidString(e))
	require.NotContains(t, e, "\x00")
}

func FuzzExcerpt(f *testing.F) {
	f.Add([]byte("hello"))
	f.Add([]byte{0xff, 0x00, 0xe2, 0x82})
	f.Fuzz(func(t *testing.T, b []byte) {
		e := excerpt(b)
		if len(e) > ResponseExcerptBytes || !utf8.ValidString(e) || strings.ContainsRune(e, 0) {
			t.Fatalf("bad excerpt of %d bytes: valid=%v len=%d", len(b), utf8.ValidString(e), len(e))
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	f.Add("120")
	f.Add("Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add("-1")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if ok && (d < MinRetryAfter || d > MaxRetryAfter) {
			t.Fatalf("Retry-After %q gave %s outside the bounds", v, d)
		}
	})
}
