package migrations_test

import (
	"context"
	"io/fs"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/migrate"
	"github.com/standmeet/standmeet/internal/testdb"
	"github.com/standmeet/standmeet/migrations"
)

// schemaDiff builds one database by applying the migrations of fsys in order
// and another from its schema.sql alone, and returns how their catalogs differ.
func schemaDiff(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	ctx := context.Background()
	ms, err := migrate.Load(fsys)
	require.NoError(t, err)
	viaMigrations := testdb.NewEmptyURL(t)
	conn, err := pgx.Connect(ctx, viaMigrations)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, m := range ms {
		_, err := conn.Exec(ctx, m.SQL)
		require.NoError(t, err, "migration %s", m.Version)
	}
	// The migrator creates its own bookkeeping table; schema.sql declares it.
	_, err = conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
	require.NoError(t, err)
	a, err := migrate.CatalogSnapshot(ctx, conn)
	require.NoError(t, err)

	viaSchema := testdb.NewEmptyURL(t)
	conn2, err := pgx.Connect(ctx, viaSchema)
	require.NoError(t, err)
	defer conn2.Close(ctx)
	schema, err := fs.ReadFile(fsys, migrations.SchemaFile)
	require.NoError(t, err)
	_, err = conn2.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
	require.NoError(t, err)
	_, err = conn2.Exec(ctx, string(schema))
	require.NoError(t, err, "schema.sql must apply to an empty database")
	b, err := migrate.CatalogSnapshot(ctx, conn2)
	require.NoError(t, err)
	return migrate.Diff(a, b)
}

// TestMigrationsAddNothingToASchemaSQLDatabase proves that the
// numbered migrations and schema.sql define the same schema, by comparing the
// catalogs of two real databases.
func TestMigrationsAddNothingToASchemaSQLDatabase(t *testing.T) {
	t.Parallel()
	diff := schemaDiff(t, migrations.Files)
	require.Empty(t, diff, "migrations (-) and schema.sql (+) differ")
}

// TestSchemaComparisonCatchesDrift shows the comparison fails when a
// migration adds something schema.sql lacks (a fixture with a forgotten column).
func TestSchemaComparisonCatchesDrift(t *testing.T) {
	t.Parallel()
	diff := schemaDiff(t, os.DirFS("testdata/drift"))
	require.Equal(t, []string{"- column: widgets.colour text"}, diff)
}
