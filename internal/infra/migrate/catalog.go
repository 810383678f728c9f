package migrate

import (
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
)

// catalogQueries describe the public schema as comparable text rows. Column
// order is ignored (ALTER TABLE ADD COLUMN appends, schema.sql may not), as
// are generated names that PostgreSQL picks itself.
var catalogQueries = []struct{ what, sql string }{
	{"extension", `SELECT extname FROM pg_extension WHERE extname <> 'plpgsql'`},
	{"type", `SELECT t.typname || ' ' || t.typtype::text || ' ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), '')
	          FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
	          WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'c') AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.reltype = t.oid)`},
	{"relation", `SELECT c.relname || ' ' || c.relkind::text || ' ' || c.relpersistence::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'S', 'p')`},
	{"column", `SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
	          || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') || CASE WHEN a.attidentity <> '' THEN ' identity ' || a.attidentity::text ELSE '' END
	          || CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END
	          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
	          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p') AND a.attnum > 0 AND NOT a.attisdropped`},
	{"constraint", `SELECT c.relname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
	          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`},
	{"index", `SELECT regexp_replace(pg_get_indexdef(i.indexrelid), '^CREATE (UNIQUE )?INDEX \S+ ON', 'CREATE \1INDEX ON') FROM pg_index i
	          JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`},
	{"trigger", `SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
	          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT t.tgisinternal`},
	{"function", `SELECT pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	          WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
	          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`},
	{"view", `SELECT c.relname || ' ' || pg_get_viewdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	          WHERE n.nspname = 'public' AND c.relkind IN ('v', 'm')`},
}

// CatalogSnapshot describes the public schema of the database conn is on as
// sorted text rows, for comparing two databases built different ways.
func CatalogSnapshot(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var out []string
	for _, q := range catalogQueries {
		rows, err := conn.Query(ctx, q.sql)
		if err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", q.what, err)
		}
		vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", q.what, err)
		}
		for _, v := range vals {
			out = append(out, q.what+": "+v)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Diff returns the rows only in a ("-") and only in b ("+").
func Diff(a, b []string) []string {
	inA, inB := map[string]int{}, map[string]int{}
	for _, s := range a {
		inA[s]++
	}
	for _, s := range b {
		inB[s]++
	}
	var out []string
	for _, s := range a {
		if inB[s] == 0 {
			out = append(out, "- "+s)
		}
	}
	for _, s := range b {
		if inA[s] == 0 {
			out = append(out, "+ "+s)
		}
	}
	return out
}
