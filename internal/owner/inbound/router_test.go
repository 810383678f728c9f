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
	}
	for name, routes := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := inbound.NewRouter(routes...)
			require.Error(t, err)
		})
	}
}
