// Package webhookhttp posts webhook deliveries through the SSRF-guarded
// client of infra/httpx: it is the subscriber domain's Poster.
package webhookhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/httpx"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Poster sends deliveries. It is safe for concurrent use.
type Poster struct {
	client *httpx.Client
}

var _ delivery.Poster = (*Poster)(nil)

// Options configure a Poster.
type Options struct {
	// Allow lists prefixes reachable although private or loopback
	// (STANDMEET_EGRESS_ALLOW).
	Allow []netip.Prefix
	// Resolver overrides name resolution (tests).
	Resolver *net.Resolver
	// Timeout bounds one exchange; zero means delivery.HTTPTimeout.
	// Only tests shorten it.
	Timeout time.Duration
	// Concurrency is how many deliveries may post at once (the River
	// workers): as many idle connections are kept per host, so deliveries
	// to endpoints of one host reuse connections instead of opening new
	// ones. Zero keeps the client's default.
	Concurrency int
}

// New returns a Poster whose client blocks internal egress at dial time
// (redirects are not followed, so they cannot reach inside either), never
// retries, bounds an exchange by delivery.HTTPTimeout and reads at most
// delivery.MaxResponseBytes of a body.
func New(o Options) *Poster {
	if o.Timeout <= 0 {
		o.Timeout = delivery.HTTPTimeout
	}
	return &Poster{client: httpx.NewClient(httpx.Options{
		BlockInternalEgress: true,
		NoRetry:             true,
		Timeout:             o.Timeout,
		FollowRedirects:     false,
		Allow:               o.Allow,
		MaxResponseBytes:    delivery.MaxResponseBytes,
		Resolver:            o.Resolver,
		MaxIdleConnsPerHost: o.Concurrency,
	})}
}

// Post sends req within req.Timeout when set. The body is read (up to the cap) before Post returns, so
// the latency covers the whole answer. Errors wrap delivery.ErrBlocked
// for a refused target and delivery.ErrTimeout for a receiver that did
// not answer in time; any other error is a connection failure.
func (p *Poster) Post(ctx context.Context, req delivery.PostRequest) (delivery.PostResponse, error) {
	if req.Timeout > 0 {
		// The endpoint's own deadline, under the client's.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		// A URL that validation let through but net/http refuses will never
		// work: treat it like a refused target.
		return delivery.PostResponse{}, fmt.Errorf("%w: %w", delivery.ErrBlocked, err)
	}
	hreq.Header = http.Header(req.Header.Clone())
	start := time.Now()
	resp, err := p.client.Do(hreq)
	if err != nil {
		return delivery.PostResponse{Latency: time.Since(start)}, mapError(err)
	}
	// A body that fails half-way (timeout, reset) does not change the
	// outcome: the receiver answered, so its status decides.
	body, _, _ := p.client.ReadBody(resp)
	return delivery.PostResponse{StatusCode: resp.StatusCode, Header: domain.Header(resp.Header), Body: body, Latency: time.Since(start)}, nil
}

func mapError(err error) error {
	switch {
	case errors.Is(err, httpx.ErrBlocked):
		return fmt.Errorf("%w: %w", delivery.ErrBlocked, err)
	case isTimeout(err):
		return fmt.Errorf("%w: %w", delivery.ErrTimeout, err)
	default:
		return err
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
