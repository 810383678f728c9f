package owner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
)

// fakeHasher is a transparent "hash" (never use outside tests) with
// XxxFunc overrides and a count of Verify calls.
type fakeHasher struct {
	HashFunc   func(pw string) (string, error)
	VerifyFunc func(pw, hash string) (bool, error)

	mu       sync.Mutex
	verifies int
}

func (h *fakeHasher) Hash(pw string) (string, error) {
	if h.HashFunc != nil {
		return h.HashFunc(pw)
	}
	return "fake$" + strings.ToUpper(pw), nil
}

func (h *fakeHasher) Verify(pw, hash string) (bool, error) {
	h.mu.Lock()
	h.verifies++
	h.mu.Unlock()
	if h.VerifyFunc != nil {
		return h.VerifyFunc(pw, hash)
	}
	return hash == "fake$"+strings.ToUpper(pw), nil
}

func (h *fakeHasher) Verifies() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.verifies
}

// fakeTokens returns distinct, recognisable tokens.
type fakeTokens struct {
	TokenFunc func(n int) (string, error)

	mu   sync.Mutex
	n    int
	last string
}

func (g *fakeTokens) lastToken() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last
}

func (g *fakeTokens) Token(n int) (string, error) {
	if g.TokenFunc != nil {
		return g.TokenFunc(n)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	s := fmt.Sprintf("t%d_", g.n)
	g.last = s + strings.Repeat("x", max(0, n-len(s)))
	return g.last, nil
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type testBundle struct {
	svc    *owner.Service
	mem    *ownertest.Memory
	hasher *fakeHasher
	tokens *fakeTokens
	clock  *fakeClock
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{
		mem:    ownertest.NewMemory(),
		hasher: &fakeHasher{},
		tokens: &fakeTokens{},
		clock:  &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
	}
	svc, err := owner.New(owner.Deps{UoW: b.mem, Clock: b.clock, Hasher: b.hasher, Tokens: b.tokens})
	require.NoError(t, err)
	b.svc = svc
	// Every test ends by checking that no event was recorded outside the
	// transaction of the use case that recorded it.
	t.Cleanup(func() { require.Zero(t, b.mem.StrayRecords(), "Record called outside its transaction") })
	return b
}

const testPassword = "correct horse battery"

func (b *testBundle) newOwner(t *testing.T, email string) owner.Owner {
	t.Helper()
	o, err := b.svc.CreateOwner(context.Background(), email, testPassword)
	require.NoError(t, err)
	return o
}

// eventsOf returns the committed events of that type.
func (b *testBundle) eventsOf(eventType string) []ownertest.MemoryEvent {
	var out []ownertest.MemoryEvent
	for _, e := range b.mem.Events() {
		if e.Type == eventType {
			out = append(out, e)
		}
	}
	return out
}

func dataOf(t *testing.T, e ownertest.MemoryEvent) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(e.Data, &m))
	return m
}

func requireCode(t *testing.T, err error, kind domain.Kind, code string) {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "want a domain error, got %v", err)
	require.Equal(t, kind, de.Kind, "kind of %v", err)
	require.Equal(t, code, de.Code, "code of %v", err)
}

func (b *testBundle) login(email, password, ip string) (owner.LoginResult, error) {
	return b.svc.Login(context.Background(), owner.LoginInput{Email: email, Password: password, IP: ip, UserAgent: "test"})
}
