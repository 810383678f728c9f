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
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
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
		p := Package{ImportPath: l.ImportPath, Imports: l.Imports, FileImports: map[string][]string{}}
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

// TestArchitecture checks the real module.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	require.Empty(t, Check(loadModule(t)))
}

// TestArchitectureRulesCatchViolations shows each rule failing on fixtures.
func TestArchitectureRulesCatchViolations(t *testing.T) {
	t.Parallel()
	m := func(s string) string { return Module + "/" + s }
	cases := []struct {
		name string
		pkg  Package
		want string
	}{
		{"infra/events imports a domain", Package{ImportPath: m("internal/infra/events"), Imports: []string{m("internal/owner")}}, "(infra) imports domain package internal/owner"},
		{"infra/events imports the kernel", Package{ImportPath: m("internal/infra/events"), Imports: []string{m("internal/domain")}}, "(infra) imports domain package internal/domain"},
		{"domain imports an adapter", Package{ImportPath: m("internal/owner/webhooks"), Imports: []string{m("internal/adapters/postgres/webhooks")}}, "reach it through a port"},
		{"domain imports infra", Package{ImportPath: m("internal/corpus"), Imports: []string{m("internal/infra/httpx")}}, "reach it through a port"},
		{"domain imports pgx", Package{ImportPath: m("internal/access"), Imports: []string{"github.com/jackc/pgx/v5"}}, "imports github.com/jackc/pgx/v5"},
		{"owner imports access", Package{ImportPath: m("internal/owner/subscriber"), Imports: []string{m("internal/access")}}, "another domain's package internal/access"},
		{"adapter opens secrets", Package{ImportPath: m("internal/adapters/postgres/webhooks"), FileImports: map[string][]string{"store.go": {m("internal/infra/cryptobox")}}}, "only cmd/server/unseal.go"},
		{"cmd/server elsewhere than unseal.go", Package{ImportPath: m("cmd/server"), FileImports: map[string][]string{"main.go": {m("internal/infra/cryptobox")}}}, "cmd/server/main.go imports cryptobox"},
		{"an adapter updates river_job", Package{ImportPath: m("internal/adapters/postgres/webhooks"), FileStrings: map[string][]string{"delivery.go": {"UPDATE river_job j SET state = 'available'"}}}, "writes River's table"},
		{"an adapter deletes River's rows", Package{ImportPath: m("internal/bench"), FileStrings: map[string][]string{"w.go": {"DELETE FROM public.river_job WHERE kind = $1"}}}, "writes River's table"},
		{"an adapter notifies river_insert", Package{ImportPath: m("internal/adapters/postgres/webhooks"), FileStrings: map[string][]string{"delivery.go": {"SELECT pg_notify('river_insert', $1)"}}}, "notifies on River's channel"},
		{"a NOTIFY statement on River's channel", Package{ImportPath: m("internal/infra/events"), FileStrings: map[string][]string{"relay.go": {"NOTIFY river_insert, '{}'"}}}, "notifies on River's channel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := Check([]Package{c.pkg})
			require.Len(t, v, 1)
			require.Contains(t, v[0], c.want)
		})
	}
	ok := []Package{
		{ImportPath: m("internal/owner/webhooks"), Imports: []string{m("internal/domain"), m("internal/domain/op"), "github.com/google/uuid"}},
		{ImportPath: m("internal/adapters/postgres/webhooks"), Imports: []string{m("internal/owner/webhooks"), "github.com/jackc/pgx/v5"}},
		{ImportPath: m("cmd/server"), FileImports: map[string][]string{"unseal.go": {m("internal/infra/cryptobox")}}},
		{ImportPath: m("internal/adapters/postgres/webhooks"), FileStrings: map[string][]string{"delivery.go": {
			"SELECT id FROM river_job WHERE state = 'pending'", "UPDATE webhook_endpoint_leases SET holder = NULL",
			"SELECT pg_notify('standmeet_events', '')",
		}}},
	}
	require.Empty(t, Check(ok))
}

// TestRiverWriteFixtureFails loads a Go file that writes River's table and
// notifies River's channel in one statement, the table's name split out of
// the SQL by a concatenation, and requires the rule to catch both.
func TestRiverWriteFixtureFails(t *testing.T) {
	t.Parallel()
	parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join("testdata", "riverwrite", "wake.go.txt"), nil, 0)
	require.NoError(t, err)
	v := Check([]Package{{ImportPath: Module + "/internal/adapters/postgres/webhooks", FileStrings: map[string][]string{"wake.go": stringsOf(parsed)}}})
	require.Len(t, v, 2, "%v", v)
	require.Contains(t, v[0], "notifies on River's channel")
	require.Contains(t, v[1], "writes River's table")
}
