// Package migrations holds the schema of the StandMeet server as plain SQL:
// numbered migrations applied in order, and schema.sql, the whole schema in
// one file, which a test proves equal to the migrations.
package migrations

import "embed"

// Files holds every numbered migration (NNNN_name.sql) and schema.sql.
//
//go:embed *.sql
var Files embed.FS

// SchemaFile is the name of the whole-schema file inside Files.
const SchemaFile = "schema.sql"
