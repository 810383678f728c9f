package inbound_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

func TestRouterMatch(t *testing.T) {
	t.Parallel()
	nop := inbound.HandlerFunc(func(context.Context, inbound.Message) error { return nil })
	router, err := inbound.NewRouter(
		inbound.Route{Name: "every", Kind: inbound.AnyKind, EventType: "*", Handler: nop},
		inbound.Route{Name: "github-push", Kind: "github", EventType: "push", Handler: nop},
		inbound.Route{Name: "stripe-invoices", Kind: "stripe", EventType: "invoice.*", Handler: nop},
		inbound.Route{Name: "hmac-all", Kind: "hmac", Handler: nop},
	)
	require.NoError(t, err)
	cases := []struct {
		kind, eventType string
		want            []string
	}{
		{"github", "push", []string{"every", "github-push"}},
		{"github", "issues", []string{"every"}},
		{"stripe", "invoice.paid", []string{"every", "stripe-invoices"}},
		{"stripe", "charge.succeeded", []string{"every"}},
		{"hmac", "", []string{"every", "hmac-all"}},
		{"standard-webhooks", "", []string{"every"}},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.eventType, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, r := range router.Match(c.kind, c.eventType) {
				got = append(got, r.Name)
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestNewRouterRefusesBadRoutes(t *testing.T) {
	t.Parallel()
	nop := inbound.HandlerFunc(func(context.Context, inbound.Message) error { return nil })
	cases := map[string][]inbound.Route{
		"no name":      {{Kind: "github", Handler: nop}},
		"no kind":      {{Name: "x", Handler: nop}},
		"no handler":   {{Name: "x", Kind: "github"}},
		"same name 2×": {{Name: "x", Kind: "github", Handler: nop}, {Name: "x", Kind: "stripe", Handler: nop}},
		"unknown when": {{Name: "x", Kind: "github", Handler: nop, When: inbound.Condition(0x80)}},
	}
	for name, routes := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := inbound.NewRouter(routes...)
			require.Error(t, err)
		})
	}
}

// TestRouterNeed: the admission processes a message when a route without a
// condition matches it, when a matching route's condition holds otherwise,
// and never when no route matches.
func TestRouterNeed(t *testing.T) {
	t.Parallel()
	nop := inbound.HandlerFunc(func(context.Context, inbound.Message) error { return nil })
	router, err := inbound.NewRouter(
		inbound.Route{Name: "activate", Kind: inbound.AnyKind, Handler: nop, When: inbound.IfActivationPending},
		inbound.Route{Name: "github-push", Kind: "github", EventType: "push", Handler: nop},
	)
	require.NoError(t, err)
	cases := []struct {
		kind, eventType string
		want            inbound.Need
		pending, always bool
	}{
		{"github", "push", inbound.Need{}, true, true},
		{"github", "issues", inbound.Need{Conditional: true, When: inbound.IfActivationPending}, true, false},
		{"stripe", "invoice.paid", inbound.Need{Conditional: true, When: inbound.IfActivationPending}, true, false},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.eventType, func(t *testing.T) {
			t.Parallel()
			n := router.Need(c.kind, c.eventType)
			require.Equal(t, c.want, n)
			require.Equal(t, c.pending, n.Met(inbound.IfActivationPending))
			require.Equal(t, c.always, n.Met(inbound.Unconditional))
		})
	}

	empty, err := inbound.NewRouter()
	require.NoError(t, err)
	require.Equal(t, inbound.NeedNone, empty.Need("github", "push"))
	require.False(t, inbound.NeedNone.Met(inbound.IfActivationPending), "no route: never processed")
	require.True(t, inbound.Need{}.Met(inbound.Unconditional), "the zero Need: always processed")
	require.True(t, inbound.Need{Conditional: true, When: 0x80}.Met(inbound.Unconditional), "a condition the inbox cannot read counts as met")
}
