package window

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

func TestWindowsSpanWholeBucketsEndingAfterNow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 14, 37, 12, 0, time.UTC)
	cases := []struct {
		name         string
		since, until time.Time
		buckets      int
	}{
		{"hour", time.Date(2026, 12, 5, 13, 40, 0, 0, time.UTC), time.Date(2026, 12, 5, 14, 40, 0, 0, time.UTC), 12},
		{"", time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC), time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC), 24},
		{"week", time.Date(2026, 11, 28, 18, 0, 0, 0, time.UTC), time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC), 28},
	}
	for _, c := range cases {
		w, err := Of(c.name)
		require.NoError(t, err)
		since, until := w.Span(now)
		require.Equal(t, c.since, since, c.name)
		require.Equal(t, c.until, until, c.name)
		require.Len(t, w.Buckets(since, until), c.buckets, c.name)
	}
}

func TestAWindowNotOfferedIsRefused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"month", "Hour", " day", "1h"} {
		_, err := Of(name)
		de := domain.AsError(err)
		require.NotNil(t, de, name)
		require.Equal(t, CodeInvalidWindow, de.Code)
		require.Equal(t, domain.KindValidation, de.Kind)
	}
}

func TestFillListsEveryBucketWithWhatWasFound(t *testing.T) {
	t.Parallel()
	type b struct {
		At time.Time
		N  int
	}
	w, err := Of("hour")
	require.NoError(t, err)
	since, until := w.Span(time.Date(2026, 12, 5, 14, 37, 0, 0, time.UTC))
	got := Fill(w, since, until, []b{{At: since.Add(10 * time.Minute).In(time.FixedZone("x", 3600)), N: 7}},
		func(v b) time.Time { return v.At }, func(v *b, at time.Time) { v.At = at })
	require.Len(t, got, 12)
	require.Equal(t, 7, got[2].N, "matched in UTC whatever the zone it came in")
	require.Equal(t, since.Add(10*time.Minute), got[2].At)
	require.Zero(t, got[0].N)
	require.Equal(t, since, got[0].At)
}
