package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// Arrival is one request a sink endpoint received.
type Arrival struct {
	// ID is the webhook-id header (the event id, the same on every retry).
	ID string
	// At is when the request's headers arrived; Done when the handler
	// returned (or noticed the sender hang up).
	At, Done time.Time
	// Status is what the endpoint answered (0: the sender hung up first).
	Status int
	// Valid: the Standard Webhooks signature verified with the endpoint's
	// secret and the body's id matches the header.
	Valid bool
	// Type, Subject and OccurredAt come from the thin body.
	Type, Subject string
	OccurredAt    time.Time
	// InFlight is how many requests this endpoint was serving, this one
	// included, when it arrived.
	InFlight int64
	// Body is the raw body (at most 1 MiB).
	Body []byte
}

// Respond decides one answer. n counts this endpoint's requests from 0. It
// must return when r.Context() is done (the sender hung up), so the
// endpoint's in-flight count stays truthful.
type Respond func(w http.ResponseWriter, r *http.Request, n int64)

// SinkEndpoint is one receiver URL of a Sink.
type SinkEndpoint struct {
	// Name is the path element: the endpoint's URL is <sink>/e/<name>.
	Name string
	URL  string
	// ServerID is the id the server gave the endpoint (set by the caller).
	ServerID string
	respond  Respond
	verifier atomic.Pointer[standardwebhooks.Verifier]
	n        atomic.Int64
	ok       atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64

	mu       sync.Mutex
	arrivals []Arrival
	// okByType holds, per event type, the webhook-ids delivered (answered
	// 2xx with a valid signature) at least once; dups counts the verified
	// 2xx answers beyond the first per id.
	okByType map[string]map[string]struct{}
	dups     int64
}

// SetSecret sets the whsec_ secret to verify with (known once the endpoint
// has been registered with the server).
func (e *SinkEndpoint) SetSecret(secret string) error {
	key, err := standardwebhooks.ParseSecret(secret)
	if err != nil {
		return err
	}
	v, err := standardwebhooks.NewVerifier(0, key)
	if err != nil {
		return err
	}
	e.verifier.Store(v)
	return nil
}

// MaxInFlight is the most requests the endpoint ever served at once.
func (e *SinkEndpoint) MaxInFlight() int64 { return e.maxIn.Load() }

// OK is how many distinct events (webhook-ids) were delivered: a verified
// request answered with a 2xx, counted once per id however often the
// event arrived.
func (e *SinkEndpoint) OK() int64 { return e.ok.Load() }

// OKType is OK for one event type (an endpoint subscribed with a wide glob
// also hears the events its own creation records).
func (e *SinkEndpoint) OKType(eventType string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return int64(len(e.okByType[eventType]))
}

// Duplicates counts the verified 2xx answers to an event already delivered
// (the same webhook-id again): they are never deliveries.
func (e *SinkEndpoint) Duplicates() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dups
}

// RequestsType counts the requests that carried an event of the type.
func (e *SinkEndpoint) RequestsType(eventType string) int {
	n := 0
	for _, a := range e.Arrivals() {
		if a.Type == eventType {
			n++
		}
	}
	return n
}

// Requests is how many requests arrived.
func (e *SinkEndpoint) Requests() int64 { return e.n.Load() }

// Arrivals returns a copy of every arrival so far, in arrival order.
func (e *SinkEndpoint) Arrivals() []Arrival {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Arrival(nil), e.arrivals...)
}

// Delivered returns, per webhook-id, the first arrival answered with a 2xx.
func (e *SinkEndpoint) Delivered() map[string]Arrival {
	out := map[string]Arrival{}
	for _, a := range e.Arrivals() {
		if a.Status/100 != 2 || !a.Valid {
			continue
		}
		if _, seen := out[a.ID]; !seen {
			out[a.ID] = a
		}
	}
	return out
}

// Invalid counts requests whose signature did not verify.
func (e *SinkEndpoint) Invalid() int {
	n := 0
	for _, a := range e.Arrivals() {
		if !a.Valid {
			n++
		}
	}
	return n
}

// Sink is a loopback receiver serving many endpoints on one port. Each
// request is verified with the endpoint's Standard Webhooks secret and
// recorded (webhook-id, arrival time, concurrency) before it is answered.
type Sink struct {
	// URL is http://127.0.0.1:<port>.
	URL   string
	srv   *http.Server
	ln    net.Listener
	close func() error

	mu        sync.RWMutex
	endpoints map[string]*SinkEndpoint
}

// StartSink listens on addr (such as 127.0.0.1:0; loopback only).
func StartSink(addr string) (*Sink, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("sink: %s is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Sink{URL: "http://" + ln.Addr().String(), ln: ln, endpoints: map[string]*SinkEndpoint{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	s.close = serve(s.srv, ln)
	return s, nil
}

// Close stops the sink at once and returns what closing or serving failed
// with.
func (s *Sink) Close() error { return s.close() }

// Endpoint adds an endpoint answering with respond (nil: 204 at once).
func (s *Sink) Endpoint(name string, respond Respond) *SinkEndpoint {
	e := &SinkEndpoint{Name: name, URL: s.URL + "/e/" + name, respond: respond}
	s.mu.Lock()
	s.endpoints[name] = e
	s.mu.Unlock()
	return e
}

// Endpoints returns every endpoint, sorted by name.
func (s *Sink) Endpoints() []*SinkEndpoint {
	s.mu.RLock()
	out := make([]*SinkEndpoint, 0, len(s.endpoints))
	for _, e := range s.endpoints {
		out = append(out, e)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// maxSinkBody bounds what the sink reads: thin payloads are small.
const maxSinkBody = 1 << 20

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/e/")
	s.mu.RLock()
	e := s.endpoints[name]
	s.mu.RUnlock()
	if !ok || e == nil {
		http.NotFound(w, r)
		return
	}
	in := e.inFlight.Add(1)
	defer e.inFlight.Add(-1)
	for {
		m := e.maxIn.Load()
		if in <= m || e.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	a := Arrival{ID: r.Header.Get(standardwebhooks.HeaderID), At: time.Now(), InFlight: in}
	n := e.n.Add(1) - 1
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxSinkBody))
	a.Body = body
	if v := e.verifier.Load(); v != nil {
		if id, _, err := v.Verify(r.Header, body, time.Now()); err == nil && id == a.ID {
			a.Valid = true
		}
	}
	var thin struct {
		ID         string    `json:"id"`
		Type       string    `json:"type"`
		Subject    string    `json:"subject"`
		OccurredAt time.Time `json:"occurred_at"`
	}
	if json.Unmarshal(body, &thin) == nil {
		a.Type, a.Subject, a.OccurredAt = thin.Type, thin.Subject, thin.OccurredAt
		if thin.ID != a.ID {
			a.Valid = false
		}
	}
	sw := &statusWriter{ResponseWriter: w}
	if !a.Valid {
		http.Error(sw, "bad signature", http.StatusUnauthorized)
	} else if e.respond != nil {
		e.respond(sw, r, n)
	} else {
		sw.WriteHeader(http.StatusNoContent)
	}
	a.Status = sw.status
	if r.Context().Err() != nil && sw.status == 0 {
		a.Status = 0
	}
	a.Done = time.Now()
	delivered := a.Valid && a.Status/100 == 2
	e.mu.Lock()
	e.arrivals = append(e.arrivals, a)
	first := false
	if delivered {
		if e.okByType == nil {
			e.okByType = map[string]map[string]struct{}{}
		}
		ids := e.okByType[a.Type]
		if ids == nil {
			ids = map[string]struct{}{}
			e.okByType[a.Type] = ids
		}
		if _, seen := ids[a.ID]; seen {
			e.dups++
		} else {
			ids[a.ID] = struct{}{}
			first = true
		}
	}
	e.mu.Unlock()
	if first {
		e.ok.Add(1)
	}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets responders trickle.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
