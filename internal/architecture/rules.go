// Package architecture enforces the dependency rules of the design card with
// a test: the domains depend only on ports, infra/events imports no domain,
// only cmd/server/unseal.go may open sealed secrets, and no code of ours
// writes River's tables or notifies on River's channels (River's client API
// only).
package architecture

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Module is the module path.
const Module = "github.com/standmeet/standmeet"

// Package is what the rules need to know about one package.
type Package struct {
	// ImportPath is the package's import path.
	ImportPath string
	// Imports are the packages it imports directly (non-test files).
	Imports []string
	// FileImports maps each non-test Go file (base name) to its imports.
	FileImports map[string][]string
	// FileStrings maps each non-test Go file (base name) to its string
	// literals, with literals joined by + also joined.
	FileStrings map[string][]string
}

// riverTables are River's tables; riverChannel matches its NOTIFY channels.
const riverTables = `river_(?:job|queue|leader|client|client_queue|migration)`

var (
	// riverWrite matches SQL that writes one of River's tables.
	riverWrite = regexp.MustCompile(`(?i)\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?|alter\s+table|merge\s+into|copy)\s+(?:only\s+)?(?:"?\w+"?\.)?"?` + riverTables + `\b`)
	// riverNotify matches SQL that notifies on one of River's channels.
	riverNotify = regexp.MustCompile(`(?i)(?:pg_notify\s*\(\s*'river_|\bnotify\s+"?river_)`)
)

var domainRoots = []string{"internal/domain", "internal/owner", "internal/access", "internal/corpus"}

// forbiddenInDomain are third-party packages a domain must reach only
// through ports.
var forbiddenInDomain = []string{
	"github.com/jackc/pgx", "github.com/riverqueue", "riverqueue.com", "github.com/labstack/echo",
	"go.uber.org/zap", "github.com/prometheus", "github.com/modelcontextprotocol", "github.com/google/wire",
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, Module), "/") }

func under(path, root string) bool {
	r := rel(path)
	return r == root || strings.HasPrefix(r, root+"/")
}

// IsDomain reports whether path is a domain package.
func IsDomain(path string) bool {
	for _, r := range domainRoots {
		if under(path, r) {
			return true
		}
	}
	return false
}

// Check returns every violation of the rules, sorted.
func Check(pkgs []Package) []string {
	var v []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			internal := strings.HasPrefix(imp, Module+"/")
			switch {
			case under(p.ImportPath, "internal/infra") && internal && IsDomain(imp):
				v = append(v, fmt.Sprintf("%s (infra) imports domain package %s", rel(p.ImportPath), rel(imp)))
			case IsDomain(p.ImportPath) && internal && (under(imp, "internal/adapters") || under(imp, "internal/infra") || under(imp, "cmd")):
				v = append(v, fmt.Sprintf("%s (domain) imports %s: reach it through a port", rel(p.ImportPath), rel(imp)))
			case IsDomain(p.ImportPath) && internal && crossDomain(p.ImportPath, imp):
				v = append(v, fmt.Sprintf("%s imports another domain's package %s: take a function from the composition root", rel(p.ImportPath), rel(imp)))
			case IsDomain(p.ImportPath) && !internal && hasPrefixAny(imp, forbiddenInDomain):
				v = append(v, fmt.Sprintf("%s (domain) imports %s: reach it through a port", rel(p.ImportPath), imp))
			}
		}
		for file, strs := range p.FileStrings {
			for _, str := range strs {
				if m := riverWrite.FindString(str); m != "" {
					v = append(v, fmt.Sprintf("%s/%s writes River's table (%q): use River's client API", rel(p.ImportPath), file, m))
				}
				if m := riverNotify.FindString(str); m != "" {
					v = append(v, fmt.Sprintf("%s/%s notifies on River's channel (%q): use River's client API", rel(p.ImportPath), file, m))
				}
			}
		}
		for file, imps := range p.FileImports {
			for _, imp := range imps {
				if under(imp, "internal/infra/cryptobox") && !(rel(p.ImportPath) == "cmd/server" && file == "unseal.go") {
					v = append(v, fmt.Sprintf("%s/%s imports cryptobox: only cmd/server/unseal.go may open sealed secrets", rel(p.ImportPath), file))
				}
			}
		}
	}
	sort.Strings(v)
	return v
}

// crossDomain reports whether a domain package imports another domain (the
// shared kernel internal/domain is everyone's).
func crossDomain(from, to string) bool {
	if under(to, "internal/domain") {
		return false
	}
	return rootOf(from) != rootOf(to)
}

func rootOf(path string) string {
	for _, r := range domainRoots {
		if under(path, r) {
			return r
		}
	}
	return ""
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
