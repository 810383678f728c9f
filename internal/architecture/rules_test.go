package architecture

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// loadModule lists every package of the module with its imports.
func loadModule(t *testing.T) []Package {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", Module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []Package
	for dec.More() {
		var l listed
		require.NoError(t, dec.Decode(&l))
		p := Package{ImportPath: l.ImportPath, Files: l.GoFiles, Imports: l.Imports, FileImports: map[string][]string{},
			TestImports: append(append([]string(nil), l.TestImports...), l.XTestImports...)}
		p.FileStrings = map[string][]string{}
		fset := token.NewFileSet()
		for _, f := range l.GoFiles {
			parsed, err := parser.ParseFile(fset, filepath.Join(l.Dir, f), nil, 0)
			require.NoError(t, err)
			for _, is := range parsed.Imports {
				path, _ := strconv.Unquote(is.Path.Value)
				p.FileImports[f] = append(p.FileImports[f], path)
			}
			p.FileStrings[f] = stringsOf(parsed)
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// stringsOf returns the file's string literals, a chain of them joined by
// + as one string (other operands count as "?"), so SQL split over a
// concatenation is seen whole.
func stringsOf(f *ast.File) []string {
	var out []string
	var join func(e ast.Expr) string
	join = func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil {
					return s
				}
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				return join(x.X) + join(x.Y)
			}
		case *ast.ParenExpr:
			return join(x.X)
		}
		return "?"
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil {
					out = append(out, s)
				}
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				// The whole chain, once; its literals are in it.
				out = append(out, join(x))
				return false
			}
		}
		return true
	})
	return out
}

// TestArchitecture checks the real module, and that each of its packages has
// a kind.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	require.Empty(t, Check(pkgs))
	c := NewClassifier(pkgs)
	kinds := map[Kind]int{}
	for _, p := range pkgs {
		kinds[c.Kind(p.ImportPath)]++
	}
	require.Zero(t, kinds[Unknown])
	require.Positive(t, kinds[Domain])
	t.Logf("%d packages classified: %v", len(pkgs), kinds)
}

// world is the smallest module the fixtures plant their package into: the
// existing domains, each declaring ports.go, and a kernel.
func world(planted ...Package) []Package {
	m := func(s string) string { return Module + "/" + s }
	w := []Package{
		{ImportPath: m("internal/owner"), Files: []string{"ports.go", "service.go"}},
		{ImportPath: m("internal/access"), Files: []string{"ports.go"}},
		{ImportPath: m("internal/corpus"), Files: []string{"ports.go"}},
		{ImportPath: m("internal/domain"), Files: []string{"recorder.go"}},
	}
	return append(w, planted...)
}

// TestArchitectureRulesCatchViolations shows each rule failing on fixtures.
func TestArchitectureRulesCatchViolations(t *testing.T) {
	t.Parallel()
	m := func(s string) string { return Module + "/" + s }
	bookings := func(imports ...string) []Package {
		return []Package{{ImportPath: m("internal/bookings"), Files: []string{"doc.go", "ports.go", "service.go"}, Imports: imports}}
	}
	cases := []struct {
		name    string
		planted []Package
		want    string
	}{
		{"infra/events imports a domain", []Package{{ImportPath: m("internal/infra/events"), Imports: []string{m("internal/owner")}}}, "(infra) imports domain package internal/owner"},
		{"infra/events imports the kernel", []Package{{ImportPath: m("internal/infra/events"), Imports: []string{m("internal/domain")}}}, "(infra) imports kernel package internal/domain"},
		{"infra imports an adapter", []Package{{ImportPath: m("internal/infra/ratelimit"), Imports: []string{m("internal/adapters/httpapi")}}}, "(infra) imports adapter package internal/adapters/httpapi"},
		{"domain imports an adapter", []Package{{ImportPath: m("internal/owner/webhook"), Imports: []string{m("internal/adapters/postgres/webhookdb")}}}, "reach it through a port"},
		{"domain imports infra", []Package{{ImportPath: m("internal/corpus"), Files: []string{"ports.go"}, Imports: []string{m("internal/infra/httpx")}}}, "reach it through a port"},
		{"domain imports pgx", []Package{{ImportPath: m("internal/access"), Files: []string{"ports.go"}, Imports: []string{"github.com/jackc/pgx/v5"}}}, "imports github.com/jackc/pgx/v5"},
		{"owner imports access", []Package{{ImportPath: m("internal/owner/webhook/delivery"), Imports: []string{m("internal/access")}}}, "another domain's package internal/access"},
		{"domain imports net/http", []Package{{ImportPath: m("internal/owner/webhook/delivery"), Imports: []string{"net/http"}}}, "internal/owner/webhook/delivery (domain subpackage) imports net/http: HTTP belongs to the adapters"},
		{"kernel imports net/http", []Package{{ImportPath: m("internal/domain/op"), Imports: []string{"net/http"}}}, "internal/domain/op (kernel) imports net/http"},
		{"new domain imports net/http", bookings("net/http"), "internal/bookings (domain) imports net/http"},
		{"test double imports net/http/httptest", []Package{{ImportPath: m("internal/owner/inbound/inboundtest"), Imports: []string{"net/http/httptest"}}}, "(test double) imports net/http/httptest"},
		{"test double imports pgx", []Package{{ImportPath: m("internal/owner/publish/publishtest"), Imports: []string{"github.com/jackc/pgx/v5"}}}, "(test double) imports github.com/jackc/pgx/v5"},
		{"domain imports the fake kit", []Package{{ImportPath: m("internal/access"), Files: []string{"ports.go"}, Imports: []string{m("internal/domain/domaintest")}}}, "test doubles and test databases belong in tests"},
		{"production code imports a test double", []Package{{ImportPath: m("internal/adapters/httpapi"), Imports: []string{m("internal/access/accesstest")}}}, "test doubles and test databases belong in tests"},
		{"production code imports testdb", []Package{{ImportPath: m("cmd/server"), Imports: []string{m("internal/testdb")}}}, "test doubles and test databases belong in tests"},
		{"production code imports bench", []Package{{ImportPath: m("internal/adapters/httpapi/hook"), Imports: []string{m("internal/bench")}}}, "measurement code is only for cmd/bench"},
		{"new domain imports pgx", bookings("github.com/jackc/pgx/v5"), "internal/bookings (domain) imports github.com/jackc/pgx/v5"},
		{"new domain imports infra", bookings(m("internal/infra/events")), "internal/bookings (domain) imports internal/infra/events"},
		{"new domain imports another domain", bookings(m("internal/owner")), "internal/bookings imports another domain's package internal/owner"},
		{"new domain's subpackage imports an adapter", append(bookings(), Package{ImportPath: m("internal/bookings/calendar"), Imports: []string{m("internal/adapters/postgres/ownerdb")}}), "internal/bookings/calendar (domain subpackage) imports internal/adapters/postgres/ownerdb"},
		{"a domain's tests import pgx", []Package{{ImportPath: m("internal/access"), Files: []string{"ports.go"}, TestImports: []string{"github.com/jackc/pgx/v5"}}}, "internal/access (domain) tests import github.com/jackc/pgx/v5"},
		{"a new domain's tests use the test database", []Package{{ImportPath: m("internal/bookings"), Files: []string{"ports.go"}, TestImports: []string{m("internal/testdb")}}}, "internal/bookings (domain) tests import internal/testdb (testdb)"},
		{"a domain subpackage's tests import an adapter", []Package{{ImportPath: m("internal/owner/webhook"), TestImports: []string{m("internal/adapters/postgres/webhookdb")}}}, "internal/owner/webhook (domain subpackage) tests import internal/adapters/postgres/webhookdb (adapter)"},
		{"a test double's tests import River", []Package{{ImportPath: m("internal/owner/publish/publishtest"), TestImports: []string{"github.com/riverqueue/river"}}}, "tests import github.com/riverqueue/river"},
		{"unclassified package", []Package{{ImportPath: m("internal/scratch"), Files: []string{"scratch.go"}}}, "internal/scratch is not classified"},
		{"unclassified package under a fixed room", []Package{{ImportPath: m("internal/bench/loadgen")}}, "internal/bench/loadgen is not classified"},
		{"unclassified top-level package", []Package{{ImportPath: m("tools")}}, "tools is not classified"},
		{"an adapter updates river_job", []Package{{ImportPath: m("internal/adapters/postgres/webhookdb"), FileStrings: map[string][]string{"riversql.go": {"UPDATE river_job j SET state = 'available'"}}}}, "writes River's table"},
		{"an adapter reads river_job outside riversql.go", []Package{{ImportPath: m("internal/adapters/postgres/webhookdb"), FileStrings: map[string][]string{"lanes.go": {"SELECT 1 FROM river_job j WHERE j.queue = $1"}}}}, `webhookdb/lanes.go names River's "river_job"`},
		{"another adapter reads river_queue", []Package{{ImportPath: m("internal/adapters/riverjob"), FileStrings: map[string][]string{"queues.go": {"SELECT name FROM river_queue"}}}}, `riverjob/queues.go names River's "river_queue"`},
		{"cmd/server calls River's bitmask function", []Package{{ImportPath: m("cmd/server"), FileStrings: map[string][]string{"main.go": {"SELECT river_job_state_in_bitmask($1, 'available')"}}}}, `cmd/server/main.go names River's "river_job_state_in_bitmask"`},
		{"a domain reads river_leader", []Package{{ImportPath: m("internal/owner/webhook"), FileStrings: map[string][]string{"leader.go": {"SELECT leader_id FROM river_leader"}}}}, `names River's "river_leader"`},
		{"bench deletes River's rows", []Package{{ImportPath: m("internal/bench"), FileStrings: map[string][]string{"w.go": {"DELETE FROM public.river_job WHERE kind = $1"}}}}, "writes River's table"},
		{"an adapter notifies river_insert", []Package{{ImportPath: m("internal/adapters/postgres/webhookdb"), FileStrings: map[string][]string{"delivery.go": {"SELECT pg_notify('river_insert', $1)"}}}}, "notifies on River's channel"},
		{"a NOTIFY statement on River's channel", []Package{{ImportPath: m("internal/infra/events"), FileStrings: map[string][]string{"relay.go": {"NOTIFY river_insert, '{}'"}}}}, "notifies on River's channel"},
		{"adapter opens secrets", []Package{{ImportPath: m("internal/adapters/postgres/webhookdb"), FileImports: map[string][]string{"store.go": {m("internal/infra/cryptobox")}}}}, "only cmd/server/unseal.go"},
		{"cmd/server elsewhere than unseal.go", []Package{{ImportPath: m("cmd/server"), FileImports: map[string][]string{"main.go": {m("internal/infra/cryptobox")}}}}, "cmd/server/main.go imports cryptobox"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := Check(world(c.planted...))
			require.Len(t, v, 1, "%v", v)
			require.Contains(t, v[0], c.want)
		})
	}
	ok := world(
		Package{ImportPath: m("internal/owner/webhook"), Imports: []string{m("internal/domain"), m("internal/domain/op"), "github.com/google/uuid"}},
		Package{ImportPath: m("internal/owner/publish/publishtest"), Imports: []string{m("internal/owner/publish"), "github.com/stretchr/testify/require"}},
		Package{ImportPath: m("internal/adapters/postgres/webhookdb"), Imports: []string{m("internal/owner/webhook"), "github.com/jackc/pgx/v5"}, FileStrings: map[string][]string{
			"riversql.go": {"SELECT id FROM river_job WHERE state = 'pending'", "SELECT river_job_state_in_bitmask(k.unique_states, k.state) FROM river_job k"},
			"delivery.go": {"UPDATE webhook_endpoint_leases SET holder = NULL", "SELECT pg_notify('standmeet_events', '')", "SELECT job_id FROM webhook_attempts"},
		}},
		Package{ImportPath: m("internal/bench"), FileStrings: map[string][]string{"w5.go": {"SELECT count(*) FROM river_job WHERE state = 'completed'"}}},
		Package{ImportPath: m("internal/bookings"), Files: []string{"ports.go"}, Imports: []string{m("internal/domain")},
			TestImports: []string{m("internal/bookings"), m("internal/bookings/bookingstest"), "github.com/stretchr/testify/require"}},
		Package{ImportPath: m("internal/adapters/postgres/bookingsdb"), TestImports: []string{m("internal/testdb"), "github.com/jackc/pgx/v5"}},
		Package{ImportPath: m("internal/bookings/bookingstest"), Imports: []string{m("internal/bookings"), m("internal/domain/domaintest")}},
		Package{ImportPath: m("internal/adapters/postgres/bookingsdb"), Imports: []string{m("internal/bookings"), m("internal/adapters/postgres/uow")}},
		Package{ImportPath: m("internal/adapters/httpapi/hook"), Imports: []string{m("internal/owner/inbound"), "net/http"}},
		Package{ImportPath: m("internal/testdb"), Imports: []string{m("internal/infra/migrate"), "github.com/jackc/pgx/v5"}},
		Package{ImportPath: m("cmd/bench"), Imports: []string{m("internal/bench")}},
		Package{ImportPath: m("cmd/server"), FileImports: map[string][]string{"unseal.go": {m("internal/infra/cryptobox")}}},
	)
	require.Empty(t, Check(ok))
}

// TestRiverWriteFixtureFails loads a Go file that writes River's table and
// notifies River's channel in one statement, the table's name split out of
// the SQL by a concatenation, and requires the rule to catch both, even in
// the one file that may read River's tables.
func TestRiverWriteFixtureFails(t *testing.T) {
	t.Parallel()
	parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join("testdata", "riverwrite", "wake.go.txt"), nil, 0)
	require.NoError(t, err)
	v := Check([]Package{{ImportPath: Module + "/internal/adapters/postgres/webhookdb", FileStrings: map[string][]string{"riversql.go": stringsOf(parsed)}}})
	require.Len(t, v, 2, "%v", v)
	require.Contains(t, v[0], "notifies on River's channel")
	require.Contains(t, v[1], "writes River's table")
}

// TestRiverReadFixtureFails loads a Go file of the delivery adapter that
// reads River's table outside riversql.go, the table's name split out of
// the SQL by a concatenation, and requires the rule to catch it; the same
// text in riversql.go passes.
func TestRiverReadFixtureFails(t *testing.T) {
	t.Parallel()
	parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join("testdata", "riverread", "lanes.go.txt"), nil, 0)
	require.NoError(t, err)
	webhookdb := Module + "/internal/adapters/postgres/webhookdb"
	v := Check([]Package{{ImportPath: webhookdb, FileStrings: map[string][]string{"lanes.go": stringsOf(parsed)}}})
	require.Len(t, v, 1, "%v", v)
	require.Contains(t, v[0], `internal/adapters/postgres/webhookdb/lanes.go names River's "river_job"`)
	require.Empty(t, Check([]Package{{ImportPath: webhookdb, FileStrings: map[string][]string{"riversql.go": stringsOf(parsed)}}}))
}

// TestKinds pins the kind of one package of each room.
func TestKinds(t *testing.T) {
	t.Parallel()
	m := func(s string) string { return Module + "/" + s }
	c := NewClassifier(world(Package{ImportPath: m("internal/bookings"), Files: []string{"ports.go"}}))
	for path, want := range map[string]Kind{
		"internal/owner":                               Domain,
		"internal/bookings":                            Domain,
		"internal/owner/publish":                       DomainSub,
		"internal/owner/publish/publishtest":           Double,
		"internal/access/accesstest":                   Double,
		"internal/adapters/openapi/optest":             Double,
		"internal/domain/domaintest":                   Double,
		"internal/owner/ownertest":                     Double,
		"internal/owner/webhook/webhooktest":           Double,
		"internal/owner/webhook/delivery/deliverytest": Double,
		"internal/owner/inbound/supplier/suppliertest": Double,
		"internal/adapters/postgres/uow":               Adapter,
		"internal/domain/op":                           Kernel,
		"internal/adapters/postgres/ownerdb":           Adapter,
		"internal/infra/ratelimit":                     Infra,
		"internal/bench":                               Bench,
		"internal/testdb":                              TestDB,
		"internal/faults":                              Faults,
		"internal/architecture":                        Arch,
		"cmd/server":                                   Command,
		"migrations":                                   Migrations,
		"internal/scratch":                             Unknown,
		"internal/infra":                               Unknown,
		"internal/testdb/more":                         Unknown,
		"github.com/jackc/pgx/v5":                      Unknown,
	} {
		require.Equal(t, want, c.Kind(m(path)), path)
	}
}
