package migrations_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/migrations"
)

// createIndex matches an index definition of schema.sql: its name, its
// table and its columns.
var createIndex = regexp.MustCompile(`(?i)CREATE (?:UNIQUE )?INDEX (\S+) ON (\S+) \(([^)]*)\)`)

// TestAppendOnlyTablesIndexInAscendingOrder holds the tables written at
// every event or inbound message to indexes in ascending order: their rows
// arrive in time (or id) order, and a descending index takes each at the
// left end of its group, where full leaves split in half.
func TestAppendOnlyTablesIndexInAscendingOrder(t *testing.T) {
	t.Parallel()
	schema, err := fs.ReadFile(migrations.Files, migrations.SchemaFile)
	require.NoError(t, err)
	hot := map[string]bool{"events": true, "inbound_messages": true, "inbound_refusals": true}
	seen := 0
	for _, m := range createIndex.FindAllStringSubmatch(string(schema), -1) {
		if !hot[m[2]] {
			continue
		}
		seen++
		require.NotContains(t, strings.ToUpper(m[3]), "DESC", "index %s on %s", m[1], m[2])
	}
	require.GreaterOrEqual(t, seen, 10, "the pattern no longer finds the indexes of %v", hot)
}
