package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi/schema"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// volatileColumns are written by the server on its own, not by a request:
// last use of a key, the relay's progress on events, the renewal of the
// delivery lanes.
const volatileColumns = `ARRAY['last_used_at', 'fanned_out_at', 'fanout', 'relay_attempts', 'relay_error', 'relay_retry_at', 'alive_until']`

// dbFingerprint summarises every table of the application (River's own
// tables, which River's maintenance writes on its own, are left out), row by
// row, without volatileColumns.
func dbFingerprint(ts *testServer) func() (string, error) {
	return func() (string, error) {
		ctx := context.Background()
		rows, err := ts.App.Pool.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname NOT LIKE 'river%' ORDER BY 1`)
		if err != nil {
			return "", err
		}
		var tables []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				return "", err
			}
			tables = append(tables, name)
		}
		if err := rows.Err(); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, tbl := range tables {
			var sum string
			q := fmt.Sprintf(`SELECT count(*) || ' ' || md5(coalesce(string_agg((to_jsonb(t) - %[2]s)::text, '|' ORDER BY (to_jsonb(t) - %[2]s)::text), '')) FROM %[1]q t`, tbl, volatileColumns)
			if err := ts.App.Pool.QueryRow(ctx, q).Scan(&sum); err != nil {
				return "", fmt.Errorf("%s: %w", tbl, err)
			}
			fmt.Fprintf(&b, "%s %s\n", tbl, sum)
		}
		return b.String(), nil
	}
}

// opFuzzRandom is the number of all-random requests per op and surface:
// STANDMEET_OP_FUZZ_RANDOM, or a short run for make test.
func opFuzzRandom() int {
	if n, err := strconv.Atoi(os.Getenv("STANDMEET_OP_FUZZ_RANDOM")); err == nil && n >= 0 {
		return n
	}
	return 3
}

// TestOpFuzzEveryOp runs the harness over every declared op of the real
// server on REST and MCP. Every hostile request must be a 4xx with the
// contract's error and change nothing; nothing may answer 5xx. A longer
// run: STANDMEET_OP_FUZZ_RANDOM=200 go test -run TestOpFuzzEveryOp ./cmd/server.
func TestOpFuzzEveryOp(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	cs := mcpSession(t, ts, o.Key)
	// One use of the key first: it writes last_used_at (outside the
	// fingerprint anyway) and nothing else.
	status, body := ts.do(t, http.MethodGet, "/api/admin/me", o.Key, "")
	require.Equal(t, http.StatusOK, status, body)
	require.NotEmpty(t, ts.App.Endpoints)

	failures := fuzzOps(context.Background(), fuzzTarget{BaseURL: ts.URL, Key: o.Key, MCP: cs, Fingerprint: dbFingerprint(ts)},
		ts.App.Endpoints, fuzzConfig{Random: opFuzzRandom(), Seed: fuzzSeed(t)})
	require.Empty(t, failures, "the op fuzz harness found:\n%s", strings.Join(failures, "\n"))
	require.Empty(t, ts.Logs.FilterLevelExact(zap.ErrorLevel).All(), "fuzzing logged errors")
}

// leakyOp is a fixture op that skips the input gate and fails with an
// internal error (500) on a NUL byte: the harness must catch it.
type leakyOp struct{ wrote *int }

type leakyInput struct {
	Name  string   `json:"name"`
	Tags  []string `json:"tags,omitempty"`
	Limit int      `json:"limit,omitempty" query:"limit" range:"1,200"`
}

func (leakyOp) Meta() op.Meta {
	return op.Meta{Name: "fixture.leaky", Summary: "fails on NUL"}
}

// leakyRoute is the fixture op's route.
var leakyRoute = []httpapi.Route{{Method: http.MethodPost, Path: "/api/admin/fixture/leaky", Op: "fixture.leaky", Status: http.StatusCreated}}

func (leakyOp) NewInput() any            { return new(leakyInput) }
func (leakyOp) InputType() reflect.Type  { return reflect.TypeFor[leakyInput]() }
func (leakyOp) OutputType() reflect.Type { return reflect.TypeFor[op.Empty]() }
func (l leakyOp) Call(_ context.Context, _ op.Caller, in any) (any, error) {
	p := in.(*leakyInput)
	if strings.ContainsRune(p.Name, 0) {
		return nil, errors.New("pq: invalid byte sequence for encoding \"UTF8\": 0x00")
	}
	if p.Name == "" {
		return nil, domain.Validation("INVALID_NAME", "name is required").WithField("name")
	}
	*l.wrote++
	return map[string]string{"name": p.Name}, nil
}

// TestOpFuzzHarnessCatchesA500: over a server whose one op answers 500 on
// a NUL byte, the harness reports it, on REST and on MCP.
func TestOpFuzzHarnessCatchesA500(t *testing.T) {
	t.Parallel()
	wrote := 0
	ops, err := httpapi.Bind(op.Set{leakyOp{wrote: &wrote}}, leakyRoute)
	require.NoError(t, err)
	auth := httpapi.AuthenticatorFunc(func(r *http.Request) (op.Caller, error) {
		if r.Header.Get("Authorization") != "Bearer fixture" {
			return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no")
		}
		return op.Caller{OwnerID: uuid.Nil}, nil
	})
	tools, err := mcp.New(ops, auth, nil, mcp.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Endpoints: ops, Auth: auth, Mounters: []httpapi.Mounter{tools}}).Handler())
	t.Cleanup(srv.Close)
	client := sdk.NewClient(&sdk.Implementation{Name: "fuzz-fixture", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint:             srv.URL + mcp.Path,
		HTTPClient:           &http.Client{Transport: bearerTransport{key: "fixture"}, Timeout: 30 * time.Second},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	failures := fuzzOps(context.Background(), fuzzTarget{BaseURL: srv.URL, Key: "fixture", MCP: cs}, ops, fuzzConfig{Random: 2, Seed: 1})
	all := strings.Join(failures, "\n")
	require.Contains(t, all, "fixture.leaky REST name=a NUL byte: status 500", all)
	require.Contains(t, all, "fixture.leaky MCP name=a NUL byte: a tool error INTERNAL", all)
	require.Contains(t, all, "fixture.leaky REST limit=over the maximum: status 201", "the fixture skips the gate, so its range is not enforced either")

	// The same op behind the gate (op.New runs op.Check) passes.
	gated, err := httpapi.Bind(op.Set{op.New(leakyOp{}.Meta(), func(ctx context.Context, c op.Caller, in leakyInput) (op.Empty, error) {
		if in.Name == "" {
			return op.Empty{}, domain.Validation("INVALID_NAME", "name is required").WithField("name")
		}
		return op.Empty{}, nil
	})}, leakyRoute)
	require.NoError(t, err)
	srv2 := httptest.NewServer(httpapi.New(httpapi.Deps{Endpoints: gated, Auth: auth}).Handler())
	t.Cleanup(srv2.Close)
	// REST only here: the hostile requests must all be refused now.
	failures = fuzzOps(context.Background(), fuzzTarget{BaseURL: srv2.URL, Key: "fixture"}, gated, fuzzConfig{Random: 2, Seed: 1})
	require.Empty(t, failures, strings.Join(failures, "\n"))
}

// TestOpFuzzGateCasesCoverTheTextRules: the harness's gate cases follow each
// op's Go input: a glob field gets the non-canonical spellings, a
// single-line field the control characters, a multi-line field only the
// lone surrogate, and raw JSON and the elements of a list of objects are
// reached too.
func TestOpFuzzGateCasesCoverTheTextRules(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	cases := map[string][]string{}
	for _, ep := range ts.App.Endpoints {
		d := ep.Descriptor
		s := schema.For(d.InputType(), schema.Options{Strict: true})
		for _, c := range gateCases(d.InputType(), s, ep.Method, fieldsOf(d.InputType())) {
			cases[d.Meta().Name] = append(cases[d.Meta().Name], c.what+" -> "+c.field)
		}
	}
	for opName, want := range map[string][]string{
		"webhooks.create": {"event_types=an element two stars -> event_types[1]", "event_types=an element CR LF -> event_types[1]",
			"description=a lone surrogate -> description", "description=an escape sequence -> description",
			"headers=a key with CR LF -> headers.X\r\n", "filter=a lone surrogate in raw JSON -> filter.k"},
		"roles.create":             {"uri_globs=an element a space before -> uri_globs[1]"},
		"vault.import":             {"notes=an element's title CR LF -> notes[0].title", "notes=an element's body a lone surrogate -> notes[0].body"},
		"instance.request_upgrade": {"note=a lone surrogate -> note"},
		"ip_bans.list":             {"cursor=CR LF -> cursor"},
	} {
		for _, w := range want {
			require.Contains(t, cases[opName], w, opName)
		}
	}
	require.NotContains(t, cases["vault.import"], "notes=an element's body CR LF -> notes[0].body", "a multi-line field takes line breaks")
	require.NotContains(t, cases["instance.request_upgrade"], "note=CR LF -> note", "a multi-line field takes line breaks")
}
