package op

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

func TestCallRefusesAScopedCallerTheOpsItsScopesDoNotGrant(t *testing.T) {
	t.Parallel()
	ran := 0
	handle := func(context.Context, Caller, echoIn) (echoOut, error) { ran++; return echoOut{Said: "ran"}, nil }
	read := New(Meta{Name: "things.list", Scopes: ReadsIn(ScopeWebhooks)}, handle)
	write := New(Meta{Name: "things.create", Scopes: WritesIn(ScopeWebhooks)}, handle)
	account := New(Meta{Name: "keys.issue"}, handle)
	owner := uuid.New()

	cases := []struct {
		name   string
		d      Descriptor
		scopes Scopes
		want   string // "" allowed; otherwise a substring of the refusal's message
	}{
		{"full key reads", read, nil, ""},
		{"full key writes", write, nil, ""},
		{"full key reaches the account", account, nil, ""},
		{"read key reads", read, Scopes{ScopeRead}, ""},
		{"area key reads", read, Scopes{ScopeWebhooks}, ""},
		{"area key writes", write, Scopes{ScopeWebhooks}, ""},
		{"one of several scopes grants", write, Scopes{ScopePublish, ScopeWebhooks}, ""},
		{"read key may not write", write, Scopes{ScopeRead}, "needs an API key with the scope webhooks"},
		{"other area may not read", read, Scopes{ScopeInbound}, "needs an API key with the scope read or webhooks"},
		{"every scope together is not a full key", account, AllScopes, "needs a full API key"},
		{"an empty scope set grants nothing", read, Scopes{}, "needs an API key"},
	}
	for _, tc := range cases {
		before := ran
		out, err := tc.d.Call(context.Background(), Caller{OwnerID: owner, Scopes: tc.scopes}, &echoIn{Word: "w"})
		if tc.want == "" {
			require.NoError(t, err, tc.name)
			require.Equal(t, echoOut{Said: "ran"}, out, tc.name)
			require.Equal(t, before+1, ran, tc.name)
			continue
		}
		e := domain.AsError(err)
		require.NotNil(t, e, tc.name)
		require.Equal(t, domain.KindForbidden, e.Kind, tc.name)
		require.Equal(t, CodeForbiddenScope, e.Code, tc.name)
		require.Contains(t, e.Message, tc.want, tc.name)
		require.Contains(t, e.Message, tc.d.Meta().Name, tc.name)
		require.Equal(t, before, ran, "%s: the handler does not run", tc.name)
	}
}

func TestScopeRefusalComesBeforeTheInputGate(t *testing.T) {
	t.Parallel()
	d := New(Meta{Name: "things.create", Scopes: WritesIn(ScopeNotes)},
		func(context.Context, Caller, echoIn) (echoOut, error) { return echoOut{}, nil })
	_, err := d.Call(context.Background(), Caller{Scopes: Scopes{ScopeRead}}, &echoIn{Word: "nul\x00"})
	require.Equal(t, CodeForbiddenScope, domain.AsError(err).Code, "a refused key learns nothing about its input")
}

func TestHandleCallsAreScopedToo(t *testing.T) {
	t.Parallel()
	s := Set{New(Meta{Name: "things.create", Scopes: WritesIn(ScopeNotes)},
		func(context.Context, Caller, echoIn) (echoOut, error) { return echoOut{Said: "ok"}, nil })}
	h, err := HandleOf[echoIn, echoOut](s, "things.create")
	require.NoError(t, err)
	_, err = h.Call(context.Background(), Caller{Scopes: Scopes{ScopeWebhooks}}, echoIn{})
	require.ErrorIs(t, err, domain.Forbidden(CodeForbiddenScope, ""))
	out, err := h.Call(context.Background(), Caller{Scopes: Scopes{ScopeNotes}}, echoIn{})
	require.NoError(t, err)
	require.Equal(t, "ok", out.Said)
}

func TestScopeValidity(t *testing.T) {
	t.Parallel()
	for _, s := range AllScopes {
		require.True(t, s.Valid(), s)
	}
	for _, s := range []Scope{"", "admin", "READ", "webhooks "} {
		require.False(t, s.Valid(), s)
	}
}
