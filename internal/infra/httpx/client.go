package httpx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"
)

// Defaults applied by NewClient to zero (or negative) Options fields.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultDialTimeout      = 5 * time.Second
	DefaultMaxRedirects     = 5
	DefaultMaxResponseBytes = int64(64 << 10)
)

// maxResponseHeaderBytes bounds the status line and headers of a response;
// net/http's own default is 10 MiB.
const maxResponseHeaderBytes = 1 << 20

// Options configures NewClient. The zero value is a working client without
// the address check: production wiring sets BlockInternalEgress.
type Options struct {
	// BlockInternalEgress refuses, at dial time, every address CheckAddr
	// refuses (loopback, private, link-local, special-purpose …) unless Allow
	// lets it through. Scheme, userinfo, proxy, redirect and body rules apply
	// whether it is set or not.
	BlockInternalEgress bool
	// NoRetry guarantees at most one attempt per Do. The client never retries
	// by itself, but net/http's transport may re-send a request on a pooled
	// connection that the server closed before answering when the request is
	// replayable (it has GetBody, or an idempotent method or Idempotency-Key
	// header). With NoRetry a request with a body is sent without GetBody,
	// which makes it never replayable while connections are still reused (a
	// new TCP connection per webhook delivery would cost more than the
	// delivery); a request without a body goes over a transport that does not
	// reuse connections.
	NoRetry bool
	// Timeout bounds the whole exchange, dial to last body byte
	// (http.Client.Timeout). Default DefaultTimeout.
	Timeout time.Duration
	// FollowRedirects makes Do follow 3xx responses. By default a 3xx is
	// returned to the caller as is, body unread.
	FollowRedirects bool
	// MaxRedirects is the number of redirect hops followed before Do fails
	// with ErrTooManyRedirects. Default DefaultMaxRedirects.
	MaxRedirects int
	// Allow lists prefixes reachable although CheckAddr would refuse them
	// (from STANDMEET_EGRESS_ALLOW through ParseAllowList).
	Allow []netip.Prefix
	// MaxResponseBytes caps every response body returned by Do and read by
	// Client.ReadBody. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// DialTimeout bounds one TCP connect; never more than Timeout. Default
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// Resolver resolves host names; nil means net.DefaultResolver. Tests use it
	// to answer names without DNS traffic.
	Resolver *net.Resolver
	// MaxIdleConnsPerHost is how many idle connections are kept per host
	// for reuse. Default 4; a client that sends many requests to one host
	// at once (webhook workers) sets its concurrency, or each request above
	// the default opens a new connection.
	MaxIdleConnsPerHost int
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	o.DialTimeout = min(o.DialTimeout, o.Timeout)
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 4
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	o.Allow = slices.Clone(o.Allow)
	return o
}

// ErrTooManyRedirects is returned (inside a *url.Error) when a request would
// follow more than Options.MaxRedirects redirects.
var ErrTooManyRedirects = errors.New("httpx: too many redirects")

// URLRefusedError reports a request URL refused before any dial: a scheme
// other than http or https, or userinfo (user:pass@). It is checked on the
// first request and on every redirect hop, and unwraps to ErrBlocked.
type URLRefusedError struct {
	// URL is the refused URL with any password redacted.
	URL string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *URLRefusedError) Error() string {
	return fmt.Sprintf("httpx: URL %q refused: %s", e.URL, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBlocked) hold.
func (e *URLRefusedError) Unwrap() error { return ErrBlocked }

func checkURL(u *url.URL) error {
	if u == nil {
		return &URLRefusedError{Reason: "no URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &URLRefusedError{URL: u.Redacted(), Reason: fmt.Sprintf("scheme %q is not http or https", u.Scheme)}
	}
	if u.User != nil {
		return &URLRefusedError{URL: u.Redacted(), Reason: "URL carries userinfo (credentials)"}
	}
	return nil
}

// Client sends outbound HTTP requests under the egress policy of its Options.
// It is safe for concurrent use; build one per policy and reuse it, so its
// connection pool is shared.
type Client struct {
	hc      *http.Client
	maxBody int64
}

// NewClient builds a Client from o; zero fields take the documented defaults.
func NewClient(o Options) *Client {
	return newClient(o, nil)
}

// newClient is NewClient with a test seam: fence, when set, runs at dial time
// after the policy accepted the address and before connect(2), so a test can
// see every connection the client makes and refuse any that is not loopback
// even if the policy under test is broken.
func newClient(o Options, fence func(network, address string) error) *Client {
	o = o.withDefaults()
	g := &dialGuard{block: o.BlockInternalEgress, allow: o.Allow, fence: fence}
	dialer := &net.Dialer{
		Timeout:        o.DialTimeout,
		KeepAlive:      30 * time.Second,
		Resolver:       o.Resolver,
		ControlContext: g.control,
	}
	tr := &http.Transport{
		Proxy:                  nil, // see the package documentation: a proxy bypasses the dial check
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    min(10*time.Second, o.Timeout),
		ResponseHeaderTimeout:  o.Timeout,
		ExpectContinueTimeout:  min(time.Second, o.Timeout),
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConns:           max(100, o.MaxIdleConnsPerHost),
		MaxIdleConnsPerHost:    o.MaxIdleConnsPerHost,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		DisableCompression:     true, // no transparent, uncapped gunzip
	}
	guard := &urlGuard{base: tr}
	if o.NoRetry {
		guard.noRetry = true
		guard.noReuse = tr.Clone()
		guard.noReuse.DisableKeepAlives = true
	}
	follow, maxHops := o.FollowRedirects, o.MaxRedirects
	return &Client{
		hc: &http.Client{
			Transport: guard,
			Timeout:   o.Timeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if !follow {
					return http.ErrUseLastResponse
				}
				if len(via) > maxHops {
					return fmt.Errorf("%w: limit is %d", ErrTooManyRedirects, maxHops)
				}
				return checkURL(req.URL)
			},
		},
		maxBody: o.MaxResponseBytes,
	}
}

// Do sends req and returns the response with its body capped at
// Options.MaxResponseBytes (see LimitBody). Errors are those of
// http.Client.Do: a refusal by the policy is a *url.Error wrapping a
// *BlockedError or *URLRefusedError, both matching ErrBlocked. The caller
// closes the body, or reads it with ReadBody, which closes it.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if resp != nil {
		LimitBody(resp, c.maxBody)
	}
	return resp, err
}

// ReadBody reads resp's body up to Options.MaxResponseBytes and closes it;
// see the package-level ReadBody.
func (c *Client) ReadBody(resp *http.Response) (body []byte, truncated bool, err error) {
	return ReadBody(resp, c.maxBody)
}

// CloseIdleConnections closes pooled connections that are not in use.
func (c *Client) CloseIdleConnections() {
	c.hc.CloseIdleConnections()
}

// urlGuard refuses requests whose URL the policy forbids. As the client's
// RoundTripper it sees the first request and every redirect hop.
type urlGuard struct {
	base *http.Transport
	// noRetry: see Options.NoRetry. noReuse carries body-less requests.
	noRetry bool
	noReuse *http.Transport
}

// RoundTrip implements http.RoundTripper.
func (g *urlGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkURL(req.URL); err != nil {
		if req.Body != nil {
			// A RoundTripper closes the body even when it fails; the refusal
			// is the error the caller acts on, so a failed close adds nothing.
			_ = req.Body.Close()
		}
		return nil, err
	}
	if g.noRetry {
		if req.Body == nil || req.Body == http.NoBody {
			return g.noReuse.RoundTrip(req)
		}
		// Without GetBody net/http never replays the request (isReplayable,
		// and the nothing-written path needs GetBody to rewind the body).
		// The request is the caller's: change a shallow copy.
		r2 := *req
		r2.GetBody = nil
		req = &r2
	}
	return g.base.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the transport.
func (g *urlGuard) CloseIdleConnections() {
	g.base.CloseIdleConnections()
	if g.noReuse != nil {
		g.noReuse.CloseIdleConnections()
	}
}

// dialGuard holds the dial-time half of the policy.
type dialGuard struct {
	block bool
	allow []netip.Prefix
	fence func(network, address string) error
}

// control runs for every connection attempt, after the socket exists and
// before connect(2); address is the resolved "ip:port" being dialled.
func (g *dialGuard) control(_ context.Context, network, address string, _ syscall.RawConn) error {
	if g.block {
		switch network {
		case "tcp", "tcp4", "tcp6":
		default:
			return &BlockedError{Reason: fmt.Sprintf("network %q is not TCP", network)}
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &BlockedError{Reason: fmt.Sprintf("unparseable dial address %q", address)}
		}
		if err := CheckAddr(ap.Addr(), g.allow); err != nil {
			return err
		}
	}
	if g.fence != nil {
		return g.fence(network, address)
	}
	return nil
}
