package httpx

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
)

// ErrBodyTooLarge is returned by a body capped with LimitBody once the cap is
// reached and the server has sent more.
var ErrBodyTooLarge = errors.New("httpx: response body exceeds the limit")

// LimitBody replaces resp.Body with a reader that returns at most maxBytes bytes
// and then fails with ErrBodyTooLarge if the server sent more (io.EOF if not).
// Client.Do applies it with Options.MaxResponseBytes, so even io.ReadAll on a
// response from Do is bounded. maxBytes ≤ 0 means DefaultMaxResponseBytes.
func LimitBody(resp *http.Response, maxBytes int64) {
	if resp == nil || resp.Body == nil {
		return
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	resp.Body = &cappedBody{rc: resp.Body, left: maxBytes}
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// At the cap: one more byte tells a body that ends exactly here from
		// one that goes on.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// ReadBody reads at most maxBytes bytes of resp's body and closes it.
// truncated reports that the body was longer than maxBytes; the first
// maxBytes bytes are returned then, with a nil error. A body is never drained
// beyond maxBytes+1 bytes, so the connection of a truncated response is not
// reused. maxBytes ≤ 0 means DefaultMaxResponseBytes. A read error (a timeout, a reset) is
// returned with the bytes read before it.
func ReadBody(resp *http.Response, maxBytes int64) (body []byte, truncated bool, err error) {
	if resp == nil || resp.Body == nil {
		return nil, false, nil
	}
	defer resp.Body.Close()
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	limit := maxBytes
	if limit < math.MaxInt64 {
		limit++ // one byte beyond maxBytes detects truncation
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		// A tighter cap from LimitBody was hit first.
		return body, true, nil
	case err != nil:
		return body, false, fmt.Errorf("read response body: %w", err)
	case int64(len(body)) > maxBytes:
		return body[:maxBytes], true, nil
	}
	return body, false, nil
}
