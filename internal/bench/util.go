package bench

import (
	"bytes"
	"io"
	"sort"
	"time"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func sortTimes(ts []time.Time) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
}

// mean is the arithmetic mean of xs (0 for none); a step that alternates
// two sides reports each side by the mean of its runs.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
