package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The health charts are SVG drawn here, on the server: no script and no
// library, so a page reads the same without JavaScript, and each chart
// carries its figures in a table beside it (and in data- attributes the
// browser tests read).

// Chart geometry, in the SVG's user units (the SVG scales to its box).
const (
	chartW, chartH     = 600, 180
	chartSmallH        = 110
	chartLeft          = 44
	chartRight, chartB = 8, 22
	chartTop           = 10
)

// series is one named value of a chart's buckets.
type series struct {
	Key, Label string
}

// chartSeg is one series' part of a stacked bar.
type chartSeg struct {
	Key   string
	Value int
	X, Y  float64
	W, H  float64
	Label string
}

// chartLine is one series drawn as a line over the buckets, with a dot on
// each value (a lone value has no line to show it).
type chartLine struct {
	Key    string
	Points string
	Values string
	Dots   []chartDot
}

// chartDot is one value of a line.
type chartDot struct {
	X, Y  float64
	Label string
}

// chartTick is a label under the x axis.
type chartTick struct {
	X    float64
	Text string
}

// chart is an SVG chart with its figures.
type chart struct {
	ID, Title, Unit string
	Width, Height   int
	// PlotBottom is the y of the x axis, YMax the value at the top.
	PlotBottom, PlotTop float64
	YMax                int
	Series              []series
	Segs                []chartSeg
	Lines               []chartLine
	Ticks               []chartTick
	// Columns and Rows are the figures' table: a bucket per row.
	Columns []string
	Rows    [][]string
	// Total per series over the window, in Series' order.
	Totals []int
	Empty  bool
}

// chartBucket is one bucket's values, by series key; a nil value is
// missing (a latency without an answered attempt).
type chartBucket struct {
	At     time.Time
	Values map[string]*int
}

// bucketLabel names a bucket's start for a window's step.
func bucketLabel(at time.Time, step time.Duration) string {
	if step < 24*time.Hour && step >= time.Hour {
		return at.UTC().Format("Jan 2 15:04")
	}
	if step < time.Hour {
		return at.UTC().Format("15:04")
	}
	return at.UTC().Format("Jan 2")
}

func newChart(id, title, unit string, small bool, ss []series, bs []chartBucket, step time.Duration) chart {
	c := chart{ID: id, Title: title, Unit: unit, Width: chartW, Height: chartH, Series: ss}
	if small {
		c.Height = chartSmallH
	}
	c.PlotTop, c.PlotBottom = chartTop, float64(c.Height-chartB)
	c.Columns = append([]string{"Bucket (UTC)"}, labels(ss)...)
	c.Totals = make([]int, len(ss))
	for _, b := range bs {
		row := []string{bucketLabel(b.At, step)}
		for i, s := range ss {
			v := b.Values[s.Key]
			if v == nil {
				row = append(row, "—")
				continue
			}
			row = append(row, strconv.Itoa(*v))
			c.Totals[i] += *v
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

func labels(ss []series) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Label
	}
	return out
}

// slot returns the x and width of bucket i of n.
func (c *chart) slot(i, n int) (x, w float64) {
	w = float64(c.Width-chartLeft-chartRight) / float64(n)
	return float64(chartLeft) + float64(i)*w, w
}

func (c *chart) y(v int) float64 {
	if c.YMax == 0 {
		return c.PlotBottom
	}
	return c.PlotBottom - float64(v)/float64(c.YMax)*(c.PlotBottom-c.PlotTop)
}

// ticks labels about five buckets along the x axis.
func (c *chart) ticks(bs []chartBucket, step time.Duration) {
	every := max(1, len(bs)/5)
	for i := 0; i < len(bs); i += every {
		x, w := c.slot(i, len(bs))
		c.Ticks = append(c.Ticks, chartTick{X: x + w/2, Text: bucketLabel(bs[i].At, step)})
	}
}

// stackedChart draws each bucket as a bar of its series stacked, the first
// at the bottom.
func stackedChart(id, title string, small bool, ss []series, bs []chartBucket, step time.Duration) chart {
	c := newChart(id, title, "", small, ss, bs, step)
	for _, b := range bs {
		sum := 0
		for _, s := range ss {
			if v := b.Values[s.Key]; v != nil {
				sum += *v
			}
		}
		c.YMax = max(c.YMax, sum)
	}
	c.Empty = c.YMax == 0
	c.YMax = niceMax(c.YMax)
	for i, b := range bs {
		x, w := c.slot(i, len(bs))
		base := 0
		for _, s := range ss {
			v := b.Values[s.Key]
			if v == nil || *v == 0 {
				continue
			}
			top := c.y(base + *v)
			c.Segs = append(c.Segs, chartSeg{Key: s.Key, Value: *v, X: x + w*0.12, W: w * 0.76, Y: top, H: c.y(base) - top,
				Label: fmt.Sprintf("%s: %d %s", bucketLabel(b.At, step), *v, strings.ToLower(s.Label))})
			base += *v
		}
	}
	c.ticks(bs, step)
	return c
}

// lineChart draws each series as a line through the buckets that have a
// value.
func lineChart(id, title, unit string, small bool, ss []series, bs []chartBucket, step time.Duration) chart {
	c := newChart(id, title, unit, small, ss, bs, step)
	c.Empty = true
	for _, b := range bs {
		for _, s := range ss {
			if v := b.Values[s.Key]; v != nil {
				c.YMax = max(c.YMax, *v)
				c.Empty = false
			}
		}
	}
	c.YMax = niceMax(c.YMax)
	for _, s := range ss {
		var (
			pts, vals []string
			dots      []chartDot
		)
		for i, b := range bs {
			v := b.Values[s.Key]
			if v == nil {
				continue
			}
			x, w := c.slot(i, len(bs))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x+w/2, c.y(*v)))
			vals = append(vals, strconv.Itoa(*v))
			dots = append(dots, chartDot{X: x + w/2, Y: c.y(*v), Label: fmt.Sprintf("%s: %s %d %s", bucketLabel(b.At, step), s.Label, *v, unit)})
		}
		c.Lines = append(c.Lines, chartLine{Key: s.Key, Points: strings.Join(pts, " "), Values: strings.Join(vals, " "), Dots: dots})
	}
	c.ticks(bs, step)
	return c
}

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
func niceMax(v int) int {
	if v <= 0 {
		return 1
	}
	p := 1
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []int{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func intp(v int) *int { return &v }
