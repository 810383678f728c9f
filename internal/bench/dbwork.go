package bench

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"time"
)

// DBWork is the database work done in the bench database: statements as
// pg_stat_statements counts them (BEGIN and COMMIT included, since each is a
// round trip), transactions and rows changed as pg_stat_database counts them.
// Between two snapshots it is the work of everything that ran against the
// database meanwhile: servers, River's pollers and maintenance, and the
// bench's own few queries.
type DBWork struct {
	Statements   int64
	Transactions int64
	RowsChanged  int64
	// Calls is the calls per statement text (its first line or words),
	// read only when STANDMEET_BENCH_STATEMENTS is set.
	Calls map[string]int64
}

// Sub is the work done between an earlier snapshot o and w.
func (w DBWork) Sub(o DBWork) DBWork {
	d := DBWork{
		Statements:   w.Statements - o.Statements,
		Transactions: w.Transactions - o.Transactions,
		RowsChanged:  w.RowsChanged - o.RowsChanged,
	}
	if w.Calls != nil {
		d.Calls = map[string]int64{}
		for q, n := range w.Calls {
			if n -= o.Calls[q]; n > 0 {
				d.Calls[q] = n
			}
		}
	}
	return d
}

// Per divides the work by n units (deliveries, messages); all zero for n ≤ 0.
func (w DBWork) Per(n int64) (statements, transactions, rows float64) {
	if n <= 0 {
		return 0, 0, 0
	}
	f := float64(n)
	return float64(w.Statements) / f, float64(w.Transactions) / f, float64(w.RowsChanged) / f
}

// statsSettle is how long a snapshot waits first: PostgreSQL's backends
// publish their transaction and row counters at most every second while busy
// and within ten seconds once idle, while pg_stat_statements counts at once.
const statsSettle = 11 * time.Second

// EnableWorkCounting makes WorkSnapshot possible on the bench database: it
// needs pg_stat_statements in shared_preload_libraries (scripts/devdb.sh
// starts the private cluster so). It returns an error saying what is missing
// otherwise, and the bench then reports no per-unit work.
func (b *ServerBench) EnableWorkCounting(ctx context.Context) error {
	var libs string
	if err := b.Pool.QueryRow(ctx, `SHOW shared_preload_libraries`).Scan(&libs); err != nil {
		return fmt.Errorf("read shared_preload_libraries: %w", err)
	}
	if _, err := b.Pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return fmt.Errorf("pg_stat_statements is not available (shared_preload_libraries = %q; restart the private cluster with make devdb-stop): %w", libs, err)
	}
	var n int64
	if err := b.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_statements LIMIT 1`).Scan(&n); err != nil {
		return fmt.Errorf("pg_stat_statements is not loaded (shared_preload_libraries = %q; restart the private cluster with make devdb-stop): %w", libs, err)
	}
	b.workCounting = true
	return nil
}

// WorkSnapshot reads the bench database's work counters after letting the
// backends publish theirs. ok is false when counting is not enabled.
func (b *ServerBench) WorkSnapshot(ctx context.Context) (w DBWork, ok bool, err error) {
	if !b.workCounting {
		return DBWork{}, false, nil
	}
	select {
	case <-ctx.Done():
		return DBWork{}, false, ctx.Err()
	case <-time.After(statsSettle):
	}
	err = b.Pool.QueryRow(ctx, `
SELECT coalesce((SELECT sum(calls) FROM pg_stat_statements s
                  WHERE s.dbid = d.datid), 0)::bigint,
       (d.xact_commit + d.xact_rollback)::bigint,
       (d.tup_inserted + d.tup_updated + d.tup_deleted)::bigint
  FROM pg_stat_database d
 WHERE d.datname = current_database()`).Scan(&w.Statements, &w.Transactions, &w.RowsChanged)
	if err != nil {
		return DBWork{}, false, fmt.Errorf("read work counters: %w", err)
	}
	if os.Getenv("STANDMEET_BENCH_STATEMENTS") != "" {
		if w.Calls, err = b.statementCalls(ctx); err != nil {
			return DBWork{}, false, err
		}
	}
	return w, true, nil
}

// spaces collapses the white space of a statement's text.
var spaces = regexp.MustCompile(`\s+`)

// statementCalls reads pg_stat_statements' calls per statement of the
// bench database, keyed by the first 100 characters of its text.
func (b *ServerBench) statementCalls(ctx context.Context) (map[string]int64, error) {
	rows, err := b.Pool.Query(ctx, `SELECT s.query, s.calls FROM pg_stat_statements s
  JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database()`)
	if err != nil {
		return nil, fmt.Errorf("read statement calls: %w", err)
	}
	defer rows.Close()
	calls := map[string]int64{}
	for rows.Next() {
		var (
			q string
			n int64
		)
		if err := rows.Scan(&q, &n); err != nil {
			return nil, fmt.Errorf("read statement calls: %w", err)
		}
		q = spaces.ReplaceAllString(q, " ")
		if len(q) > 100 {
			q = q[:100]
		}
		calls[q] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read statement calls: %w", err)
	}
	return calls, nil
}

// MeasureWork runs fn between two snapshots and, when counting is enabled,
// reports statements, transactions and rows changed per unit under the keys
// <key>_statements_per_<unit>, <key>_transactions_per_<unit> and
// <key>_rows_per_<unit>; where /proc can be read, it also reports the
// processor time per unit that fn's run took (reportCPU). fn returns how
// many units it completed.
func (b *ServerBench) MeasureWork(ctx context.Context, key, unit string, fn func() (int64, error)) error {
	before, ok, err := b.WorkSnapshot(ctx)
	if err != nil {
		return err
	}
	pids := b.serverPids()
	cpu0, cpuOK := ReadCPUTime("/proc", pids)
	n, err := fn()
	if err != nil {
		return err
	}
	if cpu1, ok := ReadCPUTime("/proc", pids); cpuOK && ok {
		b.reportCPU(key, unit, cpu1.Sub(cpu0), n)
	}
	if !ok {
		return nil
	}
	after, _, err := b.WorkSnapshot(ctx)
	if err != nil {
		return err
	}
	b.reportWork(key, unit, after.Sub(before), n)
	return nil
}

// reportCPU writes the processor time d used for n units:
// <key>_postgres_cpu_ms_per_<unit>, <key>_server_cpu_ms_per_<unit> and the
// machine's busy share, <key>_machine_busy.
func (b *ServerBench) reportCPU(key, unit string, d CPUTime, n int64) {
	if n <= 0 {
		return
	}
	pg := float64(d.Postgres) / float64(time.Millisecond) / float64(n)
	srv := float64(d.Servers) / float64(time.Millisecond) / float64(n)
	b.r.Extra[fmt.Sprintf("%s_postgres_cpu_ms_per_%s", key, unit)] = pg
	b.r.Extra[fmt.Sprintf("%s_server_cpu_ms_per_%s", key, unit)] = srv
	b.r.Extra[key+"_machine_busy"] = d.BusyShare()
	b.r.Note("%s: processor time per %s: PostgreSQL %.2f ms, servers %.2f ms; the machine was %.0f%% busy",
		key, unit, pg, srv, 100*d.BusyShare())
}

// reportWork writes the work d done for n units under MeasureWork's keys.
func (b *ServerBench) reportWork(key, unit string, d DBWork, n int64) {
	s, x, r := d.Per(n)
	b.r.Extra[fmt.Sprintf("%s_statements_per_%s", key, unit)] = s
	b.r.Extra[fmt.Sprintf("%s_transactions_per_%s", key, unit)] = x
	b.r.Extra[fmt.Sprintf("%s_rows_per_%s", key, unit)] = r
	b.r.Note("%s: %.2f statements, %.2f transactions, %.2f rows changed per %s (%d %ss)", key, s, x, r, unit, n, unit)
	if d.Calls == nil || n <= 0 {
		return
	}
	qs := make([]string, 0, len(d.Calls))
	for q := range d.Calls {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return d.Calls[qs[i]] > d.Calls[qs[j]] })
	for _, q := range qs[:min(len(qs), 15)] {
		fmt.Printf("    %s: %6.3f per %s  %s\n", key, float64(d.Calls[q])/float64(n), unit, q)
	}
}
