package architecture

import (
	"encoding/json"
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
		fset := token.NewFileSet()
		for _, f := range l.GoFiles {
			parsed, err := parser.ParseFile(fset, filepath.Join(l.Dir, f), nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, is := range parsed.Imports {
				path, _ := strconv.Unquote(is.Path.Value)
				p.FileImports[f] = append(p.FileImports[f], path)
			}
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
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
	}
	require.Empty(t, Check(ok))
}
