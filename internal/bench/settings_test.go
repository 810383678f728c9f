package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// TestRecordSettingsReadsTheDatabasesDurability: the tests' cluster runs
// without durability, which the report says, with the STANDMEET_* settings
// the servers inherit and nothing else of the environment.
func TestRecordSettingsReadsTheDatabasesDurability(t *testing.T) {
	t.Parallel()
	r := NewReport()
	durable, err := r.RecordSettings(context.Background(), testdb.ServerURL(t), []string{"STANDMEET_WEBHOOK_LANES=false", "HOME=/root"})
	require.NoError(t, err)
	require.False(t, durable, "the tests' cluster runs with fsync off")
	require.Equal(t, "off", r.Settings["postgresql.fsync"])
	require.Equal(t, "off", r.Settings["postgresql.full_page_writes"])
	require.NotEmpty(t, r.Settings["postgresql.version"])
	require.Equal(t, "false", r.Settings["STANDMEET_WEBHOOK_LANES"])
	require.NotContains(t, r.Settings, "HOME")
	require.Equal(t, r.Settings, r.JSON()["settings"])
}
