package migrations

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableEventPolicy runs the per-table event gate on the real schema.sql.
func TestTableEventPolicy(t *testing.T) {
	t.Parallel()
	schema, err := Files.ReadFile(SchemaFile)
	require.NoError(t, err)
	errs := CheckEventPolicy(string(schema))
	require.Empty(t, errs, "every CREATE TABLE in schema.sql must declare its event policy")
}

// TestTableEventPolicyCatchesViolations shows the gate fails when its rule is
// broken, on fixtures.
func TestTableEventPolicyCatchesViolations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file    string
		wantErr string
	}{
		{"missing.sql", "table forgotten declares no event policy"},
		{"emit_without_trigger.sql", "table loud declares events: emit but has no trigger"},
		{"no_reason.sql", "table quiet: malformed policy"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile("testdata/policy/" + c.file)
			require.NoError(t, err)
			errs := CheckEventPolicy(string(b))
			require.Len(t, errs, 1)
			require.Contains(t, errs[0].Error(), c.wantErr)
		})
	}
	b, err := os.ReadFile("testdata/policy/good.sql")
	require.NoError(t, err)
	require.Empty(t, CheckEventPolicy(string(b)))
}
