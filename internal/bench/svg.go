package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// Series is one latency distribution on the chart.
type Series struct {
	Name string
	Data []time.Duration // sorted
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// LatencySVG draws the cumulative distributions of the series on a
// logarithmic millisecond axis: the further left and steeper, the better.
func LatencySVG(title string, series []Series) string {
	const w, h, left, right, top, bottom = 900, 480, 70, 220, 40, 50
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	minMs, maxMs := math.Inf(1), 0.0
	for _, s := range series {
		if len(s.Data) == 0 {
			continue
		}
		minMs = math.Min(minMs, math.Max(Ms(s.Data[0]), 0.01))
		maxMs = math.Max(maxMs, Ms(s.Data[len(s.Data)-1]))
	}
	if maxMs == 0 {
		minMs, maxMs = 0.1, 1
	}
	lo, hi := math.Floor(math.Log10(minMs)), math.Ceil(math.Log10(maxMs))
	if hi <= lo {
		hi = lo + 1
	}
	x := func(ms float64) float64 {
		return float64(left) + (math.Log10(math.Max(ms, 0.01))-lo)/(hi-lo)*pw
	}
	y := func(q float64) float64 { return float64(top) + (1-q)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="15">%s</text>`, left, html.EscapeString(title))
	for e := lo; e <= hi; e++ {
		xx := x(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%s ms</text>`,
			xx, top, xx, h-bottom, xx, h-bottom+16, trimFloat(math.Pow(10, e)))
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">p%s</text>`,
			left, y(q), w-right, y(q), left-6, y(q)+4, trimFloat(q*100))
	}
	for i, s := range series {
		if len(s.Data) == 0 {
			continue
		}
		color := palette[i%len(palette)]
		var pts []string
		step := 1
		if len(s.Data) > 2000 {
			step = len(s.Data) / 2000
		}
		for j := 0; j < len(s.Data); j += step {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(Ms(s.Data[j])), y(float64(j+1)/float64(len(s.Data)))))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(Ms(s.Data[len(s.Data)-1])), y(1)))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(pts, " "))
		ly := top + 10 + i*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s (p50 %s, p99 %s ms)</text>`,
			w-right+10, ly, color, w-right+28, ly+10, html.EscapeString(s.Name),
			trimFloat(Ms(percentileOf(s.Data, 50))), trimFloat(Ms(percentileOf(s.Data, 99))))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">latency (log scale); y: share of requests at or below</text></svg>`, left+int(pw/2), h-8)
	return b.String()
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
