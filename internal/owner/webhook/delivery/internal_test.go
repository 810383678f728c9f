package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
)

func TestFanoutScalesTheCooldown(t *testing.T) {
	t.Parallel()
	f := NewFanouter(FanoutDeps{BackoffScale: 300})
	require.Equal(t, time.Second, f.cooldown)
}

func TestEmbedScopeAsksOnEveryEventAndFailsClosed(t *testing.T) {
	t.Parallel()
	embed := uuid.New()
	ep := Endpoint{ID: uuid.New(), EmbedID: &embed}
	ev := Event{Type: domain.EventCorpusNoteChanged, Subject: "wiki://a", Data: json.RawMessage(`{"published":true}`)}
	ok, err := inScope(context.Background(), nil, ep, ev)
	require.NoError(t, err)
	require.False(t, ok, "no EmbedAdmits: nothing scoped goes out")

	revoked := false
	admits := func(context.Context, uuid.UUID, entity.CorpusEntry) (bool, error) { return !revoked, nil }
	ok, err = inScope(context.Background(), admits, ep, ev)
	require.NoError(t, err)
	require.True(t, ok)
	revoked = true
	ok, err = inScope(context.Background(), admits, ep, ev)
	require.NoError(t, err)
	require.False(t, ok, "asked again: the revocation counts at once")

	boom := func(context.Context, uuid.UUID, entity.CorpusEntry) (bool, error) {
		return false, errors.New("db down")
	}
	_, err = inScope(context.Background(), boom, ep, ev)
	require.Error(t, err)
}

// The first waiter of an endpoint held elsewhere asks PostgreSQL at an
// interval that doubles from LeasePoll to MaxLeasePoll while the lease stays
// away; a release heard from elsewhere lets it ask at once; taking the lease
// here starts the pace over.
func TestTheFallbackPollBacksOffPerEndpoint(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	first, second := h.wait(id), h.wait(id)
	require.False(t, h.shouldPoll(id, first, false), "its take just asked")
	require.False(t, h.shouldPoll(id, second, true), "only the first waiter asks")
	q := h.eps[id]
	q.polled = time.Now().Add(-LeasePoll)
	require.True(t, h.shouldPoll(id, first, false))
	require.Equal(t, 2*LeasePoll, q.pollEvery)
	q.polled = time.Now().Add(-LeasePoll)
	require.False(t, h.shouldPoll(id, first, false), "the next ask waits twice as long")
	require.True(t, h.shouldPoll(id, first, true), "a release heard from elsewhere is asked for at once")
	for range 4 {
		q.polled = time.Now().Add(-MaxLeasePoll)
		require.True(t, h.shouldPoll(id, first, false))
	}
	require.Equal(t, MaxLeasePoll, q.pollEvery)
	h.taking(id)
	h.took(id, true)
	require.False(t, h.shouldPoll(id, first, true), "a holder here passes the lease on")
	h.done(id)
	q.polled = time.Now().Add(-LeasePoll)
	require.True(t, h.shouldPoll(id, first, false), "the pace starts over once the lease was here")
	require.True(t, h.taking(id), "with no holder or taker here, a taker rings")
	require.False(t, h.taking(id), "while another delivery here takes, it does not")
	h.took(id, false)
	h.took(id, false)
}
