package web

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStackedChartStacksEachBucketsSeriesUnderTheTop(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	bs := []chartBucket{
		{At: at, Values: map[string]*int{"succeeded": intp(3), "retrying": intp(1), "gave_up": intp(0)}},
		{At: at.Add(time.Hour), Values: map[string]*int{"succeeded": intp(0), "retrying": intp(0), "gave_up": intp(0)}},
		{At: at.Add(2 * time.Hour), Values: map[string]*int{"succeeded": intp(7), "retrying": intp(0), "gave_up": intp(2)}},
	}
	c := stackedChart("x", "X", false, deliverySeries, bs, time.Hour)
	require.Equal(t, 10, c.YMax, "9 rounded up")
	require.Equal(t, []int{10, 1, 2}, c.Totals)
	require.Len(t, c.Segs, 4, "no segment for a zero")
	require.Len(t, c.Rows, 3)
	require.Equal(t, []string{"Dec 5 10:00", "3", "1", "0"}, c.Rows[0])
	for _, s := range c.Segs {
		require.GreaterOrEqual(t, s.Y, c.PlotTop)
		require.LessOrEqual(t, s.Y+s.H, c.PlotBottom+0.001)
	}
	// The bar of 9 is 0.9 of the plot's height.
	var h float64
	for _, s := range c.Segs[2:] {
		h += s.H
	}
	require.InDelta(t, 0.9*(c.PlotBottom-c.PlotTop), h, 0.01)
	require.False(t, c.Empty)
}

func TestLineChartSkipsMissingValuesAndMarksEachOne(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	bs := []chartBucket{
		{At: at, Values: map[string]*int{"p50": intp(40), "p99": intp(120)}},
		{At: at.Add(5 * time.Minute), Values: map[string]*int{"p50": nil, "p99": nil}},
	}
	c := lineChart("l", "L", "ms", true, latencySeries, bs, 5*time.Minute)
	require.Equal(t, 200, c.YMax)
	require.Len(t, c.Lines, 2)
	require.Equal(t, "40", c.Lines[0].Values)
	require.Len(t, c.Lines[0].Dots, 1)
	require.Equal(t, []string{"10:05", "—", "—"}, c.Rows[1])
	empty := lineChart("e", "E", "ms", true, latencySeries, bs[1:], 5*time.Minute)
	require.True(t, empty.Empty)
}

func TestNiceMax(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]int{0: 1, 1: 1, 3: 5, 9: 10, 11: 20, 45: 50, 51: 100, 100: 100, 101: 200, 999: 1000} {
		require.Equal(t, want, niceMax(in), in)
	}
}
