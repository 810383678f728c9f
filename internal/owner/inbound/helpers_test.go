package inbound_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// testClock is a controllable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *testClock {
	return &testClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeBox seals by prefixing the associated data, so a value opened with
// other associated data fails, as the real cryptobox does.
type fakeBox struct{}

var errWrongAD = errors.New("fake box: associated data does not match")

func (fakeBox) Seal(plaintext, ad []byte) ([]byte, error) {
	return append(append(append([]byte{}, ad...), '|'), plaintext...), nil
}

func (fakeBox) Open(sealed, ad []byte) ([]byte, error) {
	prefix := append(append([]byte{}, ad...), '|')
	if !bytes.HasPrefix(sealed, prefix) {
		return nil, errWrongAD
	}
	return bytes.TrimPrefix(sealed, prefix), nil
}

// bundle is the domain wired over the in-memory store.
type bundle struct {
	mem     *inboundtest.Memory
	cache   *inbound.SourceCache
	clock   *testClock
	svc     *inbound.Service
	gw      *inbound.Gateway
	owner   uuid.UUID
	verReg  *verifier.Registry
	routes  []inbound.Route
	process func(t *testing.T, id uuid.UUID, job inbound.Job) inbound.Outcome
}

func setup(t *testing.T, routes ...inbound.Route) *bundle {
	t.Helper()
	b := &bundle{mem: inboundtest.NewMemory(), clock: newClock(), owner: uuid.New(), verReg: verifier.NewDefaultRegistry(), routes: routes,
		cache: inbound.NewSourceCache(0)}
	b.svc = inbound.NewService(inbound.ServiceDeps{UoW: b.mem, Verifiers: b.verReg, Seal: fakeBox{}.Seal, Clock: b.clock, Cache: b.cache})
	router, err := inbound.NewRouter(routes...)
	require.NoError(t, err)
	b.gw = inbound.NewGateway(inbound.GatewayDeps{Sources: b.mem, Inbox: b.mem, Cache: b.cache, Verifiers: b.verReg, Unseal: fakeBox{}.Open, Clock: b.clock,
		Router: router})
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: b.mem.States(), Router: router, Clock: b.clock})
	b.process = func(t *testing.T, id uuid.UUID, job inbound.Job) inbound.Outcome {
		t.Helper()
		out, err := proc.Process(context.Background(), id, job)
		require.NoError(t, err)
		return out
	}
	return b
}

// swSource creates a standard-webhooks source and returns it with its key.
func (b *bundle) swSource(t *testing.T, mutate ...func(*inbound.CreateSourceInput)) (inbound.CreatedSource, []byte) {
	t.Helper()
	in := inbound.CreateSourceInput{Name: "sender", Verifier: verifier.KindStandardWebhooks}
	for _, m := range mutate {
		m(&in)
	}
	src, err := b.svc.CreateSource(context.Background(), b.owner, in)
	require.NoError(t, err)
	key, err := standardwebhooks.ParseSecret(src.Secret)
	require.NoError(t, err)
	return src, key
}

// signed builds a Standard Webhooks request signed with key at ts.
func signed(key []byte, id string, ts time.Time, body string) inbound.Request {
	h := domain.Header{}
	h.Set(standardwebhooks.HeaderID, id)
	h.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(key, id, ts, []byte(body)))
	h.Set("Content-Type", "application/json")
	return inbound.Request{Headers: h, Body: strings.NewReader(body), ContentLength: int64(len(body))}
}

// requireKind checks that err is a domain error of kind.
func requireKind(t *testing.T, err error, kind domain.Kind) {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "not a domain error: %v", err)
	require.Equal(t, kind, de.Kind, "error %v", err)
}
