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
