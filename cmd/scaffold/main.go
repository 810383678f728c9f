// Command scaffold writes a new domain into this repository, complete and
// wired, with one op and one event type:
//
//	go run ./cmd/scaffold -name parcel            # ops "parcels.*", REST /api/admin/parcels, event parcel.created
//	go run ./cmd/scaffold -name box -plural boxes
//
// It writes the domain package internal/<name> (ports.go, the service with
// one use case that records the event, the op declaration, a unit test on
// the fakes), internal/<name>/<name>test (the in-memory fake and the
// contract suite), the PostgreSQL adapter internal/adapters/postgres/<name>db
// (store, unit of work, the contract run on a fresh database), the Wire
// providers cmd/server/wire_<name>.go, the migration (the next free block of
// ten) and an e2e test cmd/server/e2e_<name>_test.go with its owner-isolation
// row and event-type driver; it adds the domain's lines to schema.sql, the
// event catalog, the REST route table, the Wire root and the op list, then
// regenerates wire_gen.go (make generate). Everything it writes builds and
// passes the tests as it is; the domain's own rules are written by hand
// afterwards (docs/extending.md).
//
// It refuses, changing nothing, when a name is taken: a package, a table, a
// route, an event type, or a file it would write.
package main

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

//go:embed templates
var templates embed.FS

// Config names the new domain.
type Config struct {
	// Name is the domain's singular name: its package, its event's prefix
	// and the entity ("parcel").
	Name string
	// Plural names its table, its ops' group and its REST path ("parcels");
	// Name + "s" when empty.
	Plural string
}

// Domain is what the templates are filled with.
type Domain struct {
	Module      string // the Go module path
	Name        string // parcel: the package, the event prefix
	Title       string // Parcel: the entity type
	Plural      string // parcels: the table, the op group
	PluralTitle string // Parcels: the store's accessor on Tx
	Event       string // parcel.created
	Op          string // parcels.create
	Path        string // /api/admin/parcels
	Table       string // parcels
	Migration   string // 0150
	ExampleID   string // a fixed id for the catalog's example
}

// Result lists the files the scaffold wrote, relative to the repository root.
type Result struct {
	Created []string
	Edited  []string
}

var (
	identifier = regexp.MustCompile(`^[a-z][a-z0-9]{1,29}$`)
	migration  = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)
)

// rooms are the directories under internal/ that are not domains.
var rooms = map[string]bool{"domain": true, "adapters": true, "infra": true, "bench": true, "testdb": true, "faults": true, "architecture": true}

func main() {
	var cfg Config
	dir := flag.String("dir", ".", "the repository's root")
	generate := flag.Bool("generate", true, "regenerate cmd/server/wire_gen.go (make generate) afterwards")
	flag.StringVar(&cfg.Name, "name", "", "the domain's singular name, lower case letters and digits (e.g. parcel)")
	flag.StringVar(&cfg.Plural, "plural", "", "its plural: table, op group and REST path (default: name + \"s\")")
	flag.Parse()
	if cfg.Name == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/scaffold -name <singular> [-plural <plural>] [-dir <repository>] [-generate=false]")
		os.Exit(2)
	}
	res, err := Scaffold(*dir, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaffold:", err)
		os.Exit(1)
	}
	for _, f := range res.Created {
		fmt.Println("created", f)
	}
	for _, f := range res.Edited {
		fmt.Println("edited ", f)
	}
	if *generate {
		if err := Generate(*dir); err != nil {
			fmt.Fprintln(os.Stderr, "scaffold:", err)
			os.Exit(1)
		}
		fmt.Println("edited  cmd/server/wire_gen.go (make generate)")
	}
	fmt.Println("next: docs/extending.md — the domain's own rules are written by hand from here")
}

// Generate regenerates cmd/server/wire_gen.go with the Makefile's Wire.
func Generate(dir string) error {
	cmd := exec.Command("make", "generate")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("make generate: %w\n%s", err, out)
	}
	return nil
}

// Scaffold writes the domain cfg names into the repository at root. It
// checks everything first and writes nothing when anything is refused.
func Scaffold(root string, cfg Config) (Result, error) {
	d, err := newDomain(root, cfg)
	if err != nil {
		return Result{}, err
	}
	files := map[string][]byte{} // path → new content
	var res Result

	err = fs.WalkDir(templates, "templates", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, "templates/"), ".tmpl")
		rel = strings.NewReplacer("MIGRATION", d.Migration, "NAME", d.Name).Replace(rel)
		if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
			return fmt.Errorf("%s exists already", rel)
		}
		text, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		out, err := render(p, string(text), d)
		if err != nil {
			return err
		}
		files[rel] = out
		res.Created = append(res.Created, rel)
		return nil
	})
	if err != nil {
		return Result{}, err
	}

	for _, e := range edits {
		before, err := os.ReadFile(filepath.Join(root, e.path))
		if err != nil {
			return Result{}, fmt.Errorf("read %s: %w", e.path, err)
		}
		after, err := e.apply(string(before), d)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", e.path, err)
		}
		files[e.path] = []byte(after)
		res.Edited = append(res.Edited, e.path)
	}

	sort.Strings(res.Created)
	sort.Strings(res.Edited)
	// gofmt aligns and sorts by the names filled in, so the output is
	// formatted here rather than in the templates.
	for rel, b := range files {
		if strings.HasSuffix(rel, ".go") {
			out, err := format.Source(b)
			if err != nil {
				return Result{}, fmt.Errorf("%s does not parse: %w", rel, err)
			}
			files[rel] = out
		}
	}
	for _, rel := range append(append([]string(nil), res.Created...), res.Edited...) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(p, files[rel], 0o644); err != nil {
			return res, err
		}
	}
	return res, nil
}

func render(name, text string, d Domain) ([]byte, error) {
	t, err := template.New(path.Base(name)).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// newDomain checks cfg against the repository and derives every name.
func newDomain(root string, cfg Config) (Domain, error) {
	if cfg.Plural == "" {
		cfg.Plural = cfg.Name + "s"
	}
	for _, n := range []string{cfg.Name, cfg.Plural} {
		if !identifier.MatchString(n) || token.IsKeyword(n) {
			return Domain{}, fmt.Errorf("%q is not a usable name: lower case letters and digits, 2 to 30, starting with a letter, not a Go keyword", n)
		}
	}
	if cfg.Name == cfg.Plural {
		return Domain{}, fmt.Errorf("the plural must differ from the name %q", cfg.Name)
	}
	if rooms[cfg.Name] {
		return Domain{}, fmt.Errorf("internal/%s is one of the fixed rooms, not a domain", cfg.Name)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", cfg.Name)); err == nil {
		return Domain{}, fmt.Errorf("internal/%s exists already", cfg.Name)
	}
	module, err := modulePath(root)
	if err != nil {
		return Domain{}, err
	}
	next, err := nextMigration(root)
	if err != nil {
		return Domain{}, err
	}
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	d := Domain{
		Module: module, Name: cfg.Name, Title: title(cfg.Name), Plural: cfg.Plural, PluralTitle: title(cfg.Plural),
		Event: cfg.Name + ".created", Op: cfg.Plural + ".create", Path: "/api/admin/" + cfg.Plural, Table: cfg.Plural,
		Migration: next, ExampleID: "0193b6ac-d9ea-7afb-8a6b-7c8d9eafbcd1",
	}
	taken := []struct{ file, needle, what string }{
		{"internal/domain/catalog_data.go", strconv.Quote(d.Event), "the event type " + d.Event},
		{"migrations/schema.sql", "CREATE TABLE " + d.Table + " ", "the table " + d.Table},
	}
	for _, c := range taken {
		b, err := os.ReadFile(filepath.Join(root, c.file))
		if err != nil {
			return Domain{}, err
		}
		if bytes.Contains(b, []byte(c.needle)) {
			if c.file == "internal/domain/catalog_data.go" {
				return Domain{}, fmt.Errorf("%s is declared already (%s): choose another name, or, when your services publish it "+
					"(an external type), take it over by hand as docs/extending.md \"Taking over an external type\" says", c.what, c.file)
			}
			return Domain{}, fmt.Errorf("%s is declared already (%s)", c.what, c.file)
		}
	}
	if used, err := grepTree(filepath.Join(root, "internal"), strconv.Quote(d.Path)); err != nil {
		return Domain{}, err
	} else if used != "" {
		return Domain{}, fmt.Errorf("the route %s is used already (%s)", d.Path, used)
	}
	return d, nil
}

func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("not a repository root: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", errors.New("go.mod names no module")
}

// nextMigration is the first number of the next free block of ten: each
// part of the schema owns a block (0130–0139 …), so a domain's later
// migrations stay beside its first.
func nextMigration(root string) (string, error) {
	es, err := os.ReadDir(filepath.Join(root, "migrations"))
	if err != nil {
		return "", err
	}
	highest := 0
	for _, e := range es {
		if m := migration.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1]) // four digits always parse
			highest = max(highest, n)
		}
	}
	return fmt.Sprintf("%04d", (highest/10+1)*10), nil
}

// grepTree returns the first non-test Go file under dir that contains s.
func grepTree(dir, s string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || found != "" || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = p
		}
		return err
	})
	return found, err
}

// edit changes one existing file.
type edit struct {
	path  string
	apply func(text string, d Domain) (string, error)
}

// edits are the lines a domain adds to files it shares with the others. A
// marker line says where each goes; a missing marker is an error, never a
// guess.
var edits = []edit{
	{"internal/domain/catalog_data.go", insertBefore("A new domain's entries go above this line", `		// Internal: {{.Event}} stays inside the instance. To let it leave as
		// a webhook, add exposure: Webhook here and move its driver in
		// cmd/server/e2e_{{.Name}}_test.go from internalEventDrivers to
		// domainEventDrivers.
		{name: "{{.Event}}", domain: "{{.Name}}", desc: "A {{.Name}} was created.",
			producer: useCase("{{.Name}}.Service.Create"),
			schema:   object(req("{{.Name}}_id", uuidOf("the {{.Name}}"))),
			subject:  "{{.Name}}/{{.ExampleID}}", example: map[string]any{"{{.Name}}_id": "{{.ExampleID}}"}},
`)},
	{"docs/contract.md", insertBefore("a new domain's row goes above this line", "| `{{.Plural}}.*` | none yet: REST and MCP cover them; a page goes in `internal/adapters/web` |\n")},
	{"internal/adapters/openapi/extras.go", insertBefore("a new domain's tag goes above this line",
		"\t\"{{.Plural}}\": \"The owner's {{.Plural}}: create one; each creation records the event {{.Event}}.\",\n")},
	{"cmd/server/wire.go", insertBefore("a new domain's set goes above this line", "\t\t{{.Title}}Set, // wire_{{.Name}}.go\n")},
	{"internal/adapters/httpapi/routes.go", insertBefore("new routes go above this line", "\t\t{\"POST\", \"{{.Path}}\", \"{{.Op}}\", http.StatusCreated},\n")},
	{"cmd/server/e2e_scopes_test.go", insertBefore("a new op's scope goes above this line", `
	// {{.Plural}}.*: a new domain's writes belong to no scope's area yet, so
	// only a full key calls them; a read (a GET) would be op.Reads.
	"{{.Op}}": fullOnly,
`)},
	{"cmd/server/collect.go", chain(
		insertBefore("a new domain's ops parameter goes above this line", "\t{{.Name}}Ops {{.Name}}Ops,\n"),
		insertBefore("a new domain's ops go above this line", "\tops = append(ops, {{.Name}}Ops...)\n"),
	)},
	{"migrations/schema.sql", appendText(`-- ==== {{.Name}} ({{.Migration}}-{{.Migration | last}}) ====
{{template "table" .}}-- ==== end {{.Name}} ====
`)},
}

// insertBefore puts snippet on the lines before the one holding marker.
func insertBefore(marker, snippet string) func(string, Domain) (string, error) {
	return func(text string, d Domain) (string, error) {
		if strings.Count(text, marker) != 1 {
			return "", fmt.Errorf("the marker line %q is missing or not unique", marker)
		}
		at := strings.Index(text, marker)
		at = strings.LastIndex(text[:at], "\n") + 1
		s, err := render(marker, snippet, d)
		if err != nil {
			return "", err
		}
		return text[:at] + string(s) + text[at:], nil
	}
}

// appendText adds snippet at the end of the file.
func appendText(snippet string) func(string, Domain) (string, error) {
	return func(text string, d Domain) (string, error) {
		s, err := renderWithTable(snippet, d)
		if err != nil {
			return "", err
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return text + string(s), nil
	}
}

func chain(fs ...func(string, Domain) (string, error)) func(string, Domain) (string, error) {
	return func(text string, d Domain) (string, error) {
		for _, f := range fs {
			var err error
			if text, err = f(text, d); err != nil {
				return "", err
			}
		}
		return text, nil
	}
}

// renderWithTable renders snippet with the migration's table statements
// available as {{template "table" .}}, so schema.sql and the migration hold
// the same text.
func renderWithTable(snippet string, d Domain) ([]byte, error) {
	table, err := templates.ReadFile("templates/migrations/MIGRATION_NAME.sql.tmpl")
	if err != nil {
		return nil, err
	}
	_, body, ok := strings.Cut(string(table), "define \"table\"}}")
	if !ok {
		return nil, errors.New("the migration template defines no \"table\"")
	}
	t, err := template.New("schema").Option("missingkey=error").Funcs(template.FuncMap{"last": lastOfBlock}).Parse(snippet + "{{define \"table\"}}" + body)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// lastOfBlock is the last number of the block of ten first opens ("0159").
func lastOfBlock(first string) string {
	n, _ := strconv.Atoi(first) // nextMigration formats four digits
	return fmt.Sprintf("%04d", n+9)
}
