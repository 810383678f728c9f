package webhookdb

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// riverModule is the module whose schema riversql.go reads.
const riverModule = "github.com/riverqueue/river"

// TestRiverVersionReviewed pins River's version to the one riversql.go was
// checked against: River's schema is not part of its API, so a new version
// may change a column, a state or a function these statements name.
func TestRiverVersionReviewed(t *testing.T) {
	t.Parallel()
	// The module graph as the build resolves it (replacements included).
	out, err := exec.Command("go", "list", "-m", "-f", "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", riverModule).Output()
	require.NoError(t, err, "go list -m %s", riverModule)
	version := strings.TrimSpace(string(out))
	require.NotEmpty(t, version, "%s has no version in the build's module graph", riverModule)
	require.Equal(t, riverVersionReviewed, version,
		"River is now %s, riversql.go was reviewed against %s: re-check every statement in riversql.go against River's "+
			"schema at %s (its migrations: the tables, columns, states, indexes and functions each statement names, and the "+
			"plans the doc comments count on) before setting riverVersionReviewed to %s",
		version, riverVersionReviewed, version, version)
}

// riverStatements are the full statements of riversql.go by name, each in
// every form the adapter runs.
func riverStatements() map[string][]string {
	var list []string
	for _, status := range append(slices.Sorted(maps.Keys(statusStates)), "") {
		list = append(list, listDeliveries(status, true), listDeliveries(status, false))
	}
	return map[string][]string{
		"listDeliveries":   list,
		"getDelivery":      {getDelivery},
		"retryState":       {retryState},
		"listByEvent":      {listByEvent},
		"latestByEvents":   {latestByEvents},
		"failedDeliveries": {failedDeliveries},
		"keepLanes":        {keepLanes},
		"stateSQL":         {stateSQL},
		"sleepingJobs":     {sleepingJobs},
		"runningJobs":      {runningJobs},
	}
}

// riverFragments are the fragments of riversql.go by name, each checked
// through the statements that compose it.
func riverFragments() map[string][]string {
	return map[string][]string{
		"endpointJobs":         {endpointJobs},
		"jobState":             {jobState},
		"effectiveMaxAttempts": {effectiveMaxAttempts},
		"endedByBound":         {endedByBound},
		"deliveryColumns":      {deliveryColumns},
		"eventDeliveryColumns": {eventDeliveryColumns},
		"latestAttempt":        {latestAttempt},
		"statusStates":         slices.Collect(maps.Values(statusStates)),
		"deliveryQueues":       {deliveryQueues},
	}
}

// TestRiverSQLIsAllChecked requires every declaration of riversql.go to be
// a statement the EXPLAIN test plans or a fragment one of those statements
// contains, so a statement added there is checked against River's schema
// too.
func TestRiverSQLIsAllChecked(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "riversql.go", nil, 0)
	require.NoError(t, err)
	statements, fragments := riverStatements(), riverFragments()
	var all []string
	for _, forms := range statements {
		all = append(all, forms...)
	}
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names = append(names, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if v, ok := s.(*ast.ValueSpec); ok {
					for _, n := range v.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	require.Contains(t, names, "riverVersionReviewed")
	for _, name := range names {
		if name == "riverVersionReviewed" {
			continue
		}
		if _, ok := statements[name]; ok {
			continue
		}
		parts, ok := fragments[name]
		require.True(t, ok, "riversql.go declares %s: add it to riverStatements or riverFragments", name)
		for _, part := range parts {
			require.True(t, slices.ContainsFunc(all, func(s string) bool { return strings.Contains(s, part) }),
				"fragment %s is in no statement of riverStatements: %s", name, part)
		}
	}
}

// param matches a statement's parameter.
var param = regexp.MustCompile(`\$(\d+)`)

// TestRiverSQLPlansOnRiversSchema plans (EXPLAIN, never runs) every form of
// every statement of riversql.go on a migrated database: a table, column,
// state or function River's schema no longer has fails here.
func TestRiverSQLPlansOnRiversSchema(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	statements := riverStatements()
	for _, name := range slices.Sorted(maps.Keys(statements)) {
		for i, sql := range statements[name] {
			n := 0
			for _, m := range param.FindAllStringSubmatch(sql, -1) {
				k, err := strconv.Atoi(m[1])
				require.NoError(t, err)
				n = max(n, k)
			}
			rows, err := pool.Query(ctx, "EXPLAIN "+sql, make([]any, n)...)
			require.NoError(t, err, "%s (form %d)", name, i)
			plan := 0
			for rows.Next() {
				plan++
			}
			require.NoError(t, rows.Err(), "%s (form %d): %s", name, i, sql)
			require.Positive(t, plan, "%s (form %d) has no plan", name, i)
		}
	}
}
