package httpapi

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/op"
)

func namedOps(names ...string) op.Set {
	var ops op.Set
	for _, n := range names {
		ops = append(ops, op.New(op.Meta{Name: n}, func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil }))
	}
	return ops
}

func TestBindPairsEveryOpWithItsRoute(t *testing.T) {
	t.Parallel()
	routes := []Route{
		{"GET", "/api/admin/things", "things.list", 0},
		{"POST", "/api/admin/things", "things.create", http.StatusCreated},
	}
	eps, err := Bind(namedOps("things.create", "things.list"), routes)
	require.NoError(t, err)
	require.Len(t, eps, 2)
	require.Equal(t, "things.list", eps[0].Descriptor.Meta().Name, "endpoints follow the table's order")
	create, ok := eps.Find("things.create")
	require.True(t, ok)
	require.Equal(t, http.StatusCreated, create.SuccessStatus())
	require.Equal(t, http.StatusOK, eps[0].SuccessStatus())
	require.Len(t, eps.Ops(), 2)
}

func TestBindFailsNamingTheMismatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		ops    op.Set
		routes []Route
		want   string
	}{
		{"op without a route", namedOps("things.list", "things.orphan"),
			[]Route{{"GET", "/api/admin/things", "things.list", 0}},
			"op things.orphan has no REST route"},
		{"route without an op", namedOps("things.list"),
			[]Route{{"GET", "/api/admin/things", "things.list", 0}, {"POST", "/api/admin/things", "things.gone", 0}},
			"route POST /api/admin/things names op things.gone, which is not declared"},
		{"two routes for one op", namedOps("things.list"),
			[]Route{{"GET", "/api/admin/things", "things.list", 0}, {"GET", "/api/admin/stuff", "things.list", 0}},
			"op things.list has a second route GET /api/admin/stuff"},
		{"one route for two ops", namedOps("things.list", "things.all"),
			[]Route{{"GET", "/api/admin/things", "things.list", 0}, {"GET", "/api/admin/things", "things.all", 0}},
			"route GET /api/admin/things is declared for both things.list and things.all"},
		{"an op declared twice", namedOps("things.list", "things.list"),
			[]Route{{"GET", "/api/admin/things", "things.list", 0}},
			"op things.list is declared twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Bind(tc.ops, tc.routes)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestRoutesHoldTheContract: the route table is consistent (every line
// binds when each names an op) and holds the contract's table (docs/contract.md)
// line for line.
func TestRoutesHoldTheContract(t *testing.T) {
	t.Parallel()
	routes := Routes()
	var names []string
	for _, r := range routes {
		names = append(names, r.Op)
	}
	_, err := Bind(namedOps(names...), routes)
	require.NoError(t, err)

	contract := []Route{
		{"GET", "/api/admin/webhooks", "webhooks.list", 0},
		{"POST", "/api/admin/webhooks", "webhooks.create", http.StatusCreated},
		{"GET", "/api/admin/webhooks/{id}", "webhooks.get", 0},
		{"PATCH", "/api/admin/webhooks/{id}", "webhooks.update", 0},
		{"DELETE", "/api/admin/webhooks/{id}", "webhooks.delete", 0},
		{"POST", "/api/admin/webhooks/{id}/rotate-secret", "webhooks.rotate_secret", 0},
		{"POST", "/api/admin/webhooks/{id}/test", "webhooks.send_test", http.StatusAccepted},
		{"GET", "/api/admin/webhooks/{id}/deliveries", "webhooks.deliveries", 0},
		{"POST", "/api/admin/webhooks/{id}/redeliver", "webhooks.redeliver", 0},
		{"GET", "/api/admin/webhooks/event-types", "webhooks.event_types", 0},
		{"POST", "/api/admin/events", "events.publish", http.StatusAccepted},
	}
	require.Equal(t, contract, routes[:len(contract)], "the table starts with the contract's, in its order")
	for _, r := range routes {
		require.Contains(t, []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut}, r.Method, r.Op)
		require.True(t, strings.HasPrefix(r.Path, "/api/"), r.Op)
	}
}

// TestRoutesEndWithTheMarker: generators add a route just above the marker
// line, so it is there exactly once, closing the table.
func TestRoutesEndWithTheMarker(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("routes.go")
	require.NoError(t, err)
	const marker = "\t\t// new routes go above this line\n\t}\n"
	require.Equal(t, 1, strings.Count(string(src), "// new routes go above this line"))
	require.Contains(t, string(src), marker)
}
