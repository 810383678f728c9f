// Package architecture enforces the dependency rules of the design card with
// a test: every package of the module belongs to a known kind, the domains
// depend only on ports and speak no HTTP, infra imports no domain or adapter, test doubles and
// measurement code stay out of production packages, only
// cmd/server/unseal.go may open sealed secrets, no code of ours writes
// River's tables or notifies on River's channels (River's client API only),
// and only RiverSQLFile names River's tables in SQL (CheckMigrations holds
// the migrations to the same).
package architecture

import (
	"fmt"
	"path"
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
	// Files are the base names of its non-test Go files.
	Files []string
	// Imports are the packages it imports directly (non-test files).
	Imports []string
	// FileImports maps each non-test Go file (base name) to its imports.
	FileImports map[string][]string
	// FileStrings maps each non-test Go file (base name) to its string
	// literals, with literals joined by + also joined.
	FileStrings map[string][]string
	// TestImports are the packages its _test.go files import (its own
	// package's and the external _test package's).
	TestImports []string
}

// riverTables are River's tables; riverChannel matches its NOTIFY channels.
const riverTables = `river_(?:job|queue|leader|client|client_queue|migration)`

var (
	// riverWrite matches SQL that writes one of River's tables.
	riverWrite = regexp.MustCompile(`(?i)\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?|alter\s+table|merge\s+into|copy)\s+(?:only\s+)?(?:"?\w+"?\.)?"?` + riverTables + `\b`)
	// riverNotify matches SQL that notifies on one of River's channels.
	riverNotify = regexp.MustCompile(`(?i)(?:pg_notify\s*\(\s*'river_|\bnotify\s+"?river_)`)
	// riverName matches a name of River's schema: a table, or a name River
	// derives from one (its indexes, its job state type, its state bitmask
	// function, its triggers).
	riverName = regexp.MustCompile(`(?i)\briver_(?:job|queue|leader|client|migration|notification)\w*`)
)

// RiverSQLFile is the one production Go file whose SQL may name River's
// tables: River's schema is not River's API, so what reads it is kept in
// one place, checked against one River version (its tests pin it).
const RiverSQLFile = "internal/adapters/postgres/webhookdb/riversql.go"

// mayNameRiver reports whether file of package p (of kind k) may name
// River's tables in its strings: RiverSQLFile; the measurement code, which
// reads River's table to measure and writes nothing (the write rule still
// holds there); and this package, whose allowlist quotes the migrations'
// statements it allows.
func mayNameRiver(p string, k Kind, file string) bool {
	return rel(p)+"/"+file == RiverSQLFile || k == Bench || k == Arch
}

// Kind is the room a package lives in; the rules are stated per kind.
type Kind string

// The kinds of package. A package of none of these is a violation: a new room
// is added here, with its rules, before code moves into it.
const (
	// Unknown is a package the rules do not classify.
	Unknown Kind = "unclassified"
	// Kernel is internal/domain and its subpackages, shared by every domain.
	Kernel Kind = "kernel"
	// Domain is a domain's root package: a directory directly under internal/
	// whose package declares its ports in ports.go.
	Domain Kind = "domain"
	// DomainSub is a subpackage of a domain, owned by it.
	DomainSub Kind = "domain subpackage"
	// Double is a package of test doubles (fakes and their contract suite),
	// named <package>test, beside the package whose ports it fakes.
	Double Kind = "test double"
	// Adapter is a package under internal/adapters.
	Adapter Kind = "adapter"
	// Infra is a package under internal/infra.
	Infra Kind = "infra"
	// Bench is internal/bench, the measurement code behind cmd/bench.
	Bench Kind = "bench"
	// TestDB is internal/testdb, the tests' database templates.
	TestDB Kind = "testdb"
	// Faults is internal/faults, the fault-injection tests.
	Faults Kind = "faults"
	// Arch is this package.
	Arch Kind = "architecture"
	// Command is a main package under cmd.
	Command Kind = "command"
	// Migrations is the embedded SQL migrations package.
	Migrations Kind = "migrations"
)

// fixedRooms are the directories directly under internal/ that are not
// domains, with their kind.
var fixedRooms = map[string]Kind{
	"domain": Kernel, "adapters": Adapter, "infra": Infra, "bench": Bench,
	"testdb": TestDB, "faults": Faults, "architecture": Arch,
}

// forbiddenInDomain are third-party packages a domain must reach only
// through ports.
var forbiddenInDomain = []string{
	"github.com/jackc/pgx", "github.com/riverqueue", "riverqueue.com", "github.com/labstack/echo",
	"go.uber.org/zap", "github.com/prometheus", "github.com/modelcontextprotocol", "github.com/google/wire",
}

// httpInDomain are the standard library's HTTP packages: the domains speak no
// HTTP (routes and statuses belong to the REST adapter; headers are
// domain.Header).
var httpInDomain = []string{"net/http"}

func rel(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, Module), "/") }

func under(p, root string) bool {
	r := rel(p)
	return r == root || strings.HasPrefix(r, root+"/")
}

// Classifier knows the kinds of a module's packages. Domains are found by
// rule, so a new domain is checked as soon as it exists.
type Classifier struct {
	domains map[string]bool // "internal/<name>" of each domain root
}

// NewClassifier finds the domains among pkgs: each internal/<name> package
// that declares ports.go and is not one of the fixed rooms.
func NewClassifier(pkgs []Package) Classifier {
	c := Classifier{domains: map[string]bool{}}
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		parts := strings.Split(r, "/")
		if len(parts) != 2 || parts[0] != "internal" {
			continue
		}
		if _, fixed := fixedRooms[parts[1]]; fixed {
			continue
		}
		for _, f := range p.Files {
			if f == "ports.go" {
				c.domains[r] = true
			}
		}
	}
	return c
}

// Kind returns the kind of the package at import path p.
func (c Classifier) Kind(p string) Kind {
	if !strings.HasPrefix(p, Module) {
		return Unknown
	}
	r := rel(p)
	parts := strings.Split(r, "/")
	switch {
	case r == "migrations":
		return Migrations
	case parts[0] == "cmd" && len(parts) == 2:
		return Command
	case parts[0] != "internal" || len(parts) < 2:
		return Unknown
	}
	if k, ok := fixedRooms[parts[1]]; ok {
		switch {
		case k == Kernel || k == Adapter || k == Infra:
			if isDouble(r) && k != Infra {
				return Double
			}
			if k == Infra && len(parts) < 3 {
				return Unknown
			}
			return k
		case len(parts) == 2:
			return k
		default:
			return Unknown
		}
	}
	root := "internal/" + parts[1]
	switch {
	case !c.domains[root]:
		return Unknown
	case len(parts) == 2:
		return Domain
	case isDouble(r):
		return Double
	default:
		return DomainSub
	}
}

func isDouble(r string) bool {
	b := path.Base(r)
	return len(b) > len("test") && strings.HasSuffix(b, "test")
}

// inDomain reports whether kind k is bound by the domain rules (ports only).
func (c Classifier) inDomain(p string) bool {
	if !strings.HasPrefix(p, Module+"/") {
		return false
	}
	switch c.Kind(p) {
	case Kernel, Domain, DomainSub:
		return true
	case Double:
		return !under(p, "internal/adapters")
	}
	return false
}

// kernelRoom is the kernel's directory: every domain may import its
// packages, and every double its double (the fake kit).
const kernelRoom = "internal/domain"

// rootOf is the domain (or kernel) directory p belongs to.
func rootOf(p string) string {
	parts := strings.Split(rel(p), "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// Check returns every violation of the rules, sorted.
func Check(pkgs []Package) []string {
	c := NewClassifier(pkgs)
	var v []string
	add := func(format string, a ...any) { v = append(v, fmt.Sprintf(format, a...)) }
	for _, p := range pkgs {
		from := c.Kind(p.ImportPath)
		if from == Unknown {
			add("%s is not classified: move it into a known room (domain with ports.go, <package>test, adapters, infra, bench, …) or add its kind to internal/architecture", rel(p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			internal := strings.HasPrefix(imp, Module+"/")
			to := c.Kind(imp)
			switch {
			case from == Infra && internal && (c.inDomain(imp) || to == Adapter):
				add("%s (infra) imports %s package %s", rel(p.ImportPath), to, rel(imp))
			case c.inDomain(p.ImportPath) && internal && (to == Adapter || to == Infra || to == Command || to == Bench || to == TestDB):
				add("%s (%s) imports %s: reach it through a port", rel(p.ImportPath), from, rel(imp))
			case c.inDomain(p.ImportPath) && internal && c.inDomain(imp) && rootOf(imp) != kernelRoom && rootOf(p.ImportPath) != rootOf(imp):
				add("%s imports another domain's package %s: take a function from the composition root", rel(p.ImportPath), rel(imp))
			case c.inDomain(p.ImportPath) && !internal && hasPrefixAny(imp, httpInDomain):
				add("%s (%s) imports %s: HTTP belongs to the adapters (routes in httpapi, headers as domain.Header)", rel(p.ImportPath), from, imp)
			case c.inDomain(p.ImportPath) && !internal && hasPrefixAny(imp, forbiddenInDomain):
				add("%s (%s) imports %s: reach it through a port", rel(p.ImportPath), from, imp)
			case internal && (to == Double || to == TestDB || to == Faults) && from != Double && from != TestDB && from != Bench:
				add("%s (%s) imports %s (%s): test doubles and test databases belong in tests", rel(p.ImportPath), from, rel(imp), to)
			case internal && to == Bench && rel(p.ImportPath) != "cmd/bench":
				add("%s imports internal/bench: measurement code is only for cmd/bench and tests", rel(p.ImportPath))
			}
		}
		// A domain's tests run on its fakes: no database driver, no test
		// database, no adapter (those tests live with the adapter).
		for _, imp := range p.TestImports {
			internal := strings.HasPrefix(imp, Module+"/")
			to := c.Kind(imp)
			switch {
			case !c.inDomain(p.ImportPath) || imp == p.ImportPath:
			case internal && (to == TestDB || to == Adapter || to == Infra || to == Command):
				add("%s (%s) tests import %s (%s): a domain's tests run on its fakes; put this test with the adapter or in cmd/server", rel(p.ImportPath), from, rel(imp), to)
			case !internal && hasPrefixAny(imp, forbiddenInDomain):
				add("%s (%s) tests import %s: a domain's tests run on its fakes, not on %s", rel(p.ImportPath), from, imp, imp)
			}
		}
		for file, strs := range p.FileStrings {
			for _, str := range strs {
				if m := riverName.FindString(str); m != "" && !mayNameRiver(p.ImportPath, from, file) {
					add("%s/%s names River's %q: River's SQL lives in %s, checked against River's version; elsewhere use River's client API", rel(p.ImportPath), file, m, RiverSQLFile)
					break
				}
			}
			for _, str := range strs {
				if m := riverWrite.FindString(str); m != "" {
					add("%s/%s writes River's table (%q): use River's client API", rel(p.ImportPath), file, m)
				}
				if m := riverNotify.FindString(str); m != "" {
					add("%s/%s notifies on River's channel (%q): use River's client API", rel(p.ImportPath), file, m)
				}
			}
		}
		for file, imps := range p.FileImports {
			for _, imp := range imps {
				if under(imp, "internal/infra/cryptobox") && !(rel(p.ImportPath) == "cmd/server" && file == "unseal.go") {
					add("%s/%s imports cryptobox: only cmd/server/unseal.go may open sealed secrets", rel(p.ImportPath), file)
				}
			}
		}
	}
	sort.Strings(v)
	return v
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
