package bench

import (
	"context"
	"fmt"
)

// runReasons is W2's fan-out with half of the endpoints left out: 100
// endpoints of which the even ones subscribe to the notes' type and the odd
// ones to code.*, so every event reaches 50 and its fan-out writes the
// summary of the 50 it does not (one webhook_fanouts row, in the fan-out's
// transaction). It reports the deliveries per second against W2's (every
// endpoint delivered, no summary), the work per delivery (compare
// w2_statements_per_delivery: the summary adds one statement per event,
// 1/50 per delivery here), and the summary's rows and bytes per event.
func (b *ServerBench) runReasons(ctx context.Context) error {
	groups, err := b.EndpointGroups(ctx, "reasons", 100, func(i int) []string {
		if i%2 == 0 {
			return []string{noteEventType}
		}
		return []string{"code.*"}
	}, func(i int) bool { return i%2 == 0 })
	if err != nil {
		return err
	}
	events := b.o.scale(200)
	b.groupsNote("reasons", groups, events)
	var (
		out           Outcome
		rate          float64
		before, after summaryWork
	)
	if err := b.MeasureWork(ctx, "reasons", "delivery", func() (int64, error) {
		var err error
		if before, err = b.summaryWork(ctx); err != nil {
			return 0, err
		}
		out, rate, err = b.runFanout(ctx, groups, "reasons", events)
		if err != nil {
			return 0, err
		}
		after, err = b.summaryWork(ctx)
		return int64(out.Delivered), err
	}); err != nil {
		return err
	}
	ceiling, name := b.w2Rate, "W2 fan-out (every endpoint delivered, no summary)"
	if ceiling == 0 {
		// W2 did not run (-only): the River ceiling stands in.
		ceiling, name = b.riverNoop, "River no-op jobs (insert + work)"
	}
	b.r.Add(Figure{Key: "reasons_deliveries_per_s",
		Label: fmt.Sprintf("fan-out with a summary per event: %d of %d endpoints delivered x %d events",
			len(matchingOf(groups)), 100, events), Unit: "/s", Value: rate, Ceiling: name, CeilingValue: ceiling})
	var rows int64
	var bytes, endpoints float64
	if err := b.Pool.QueryRow(ctx, `SELECT count(*), COALESCE(avg(pg_column_size(f.reasons)), 0)::float8,
  COALESCE(avg((SELECT sum(jsonb_array_length(v)) FROM jsonb_each(f.reasons->'reasons') AS r(k, v))), 0)::float8
FROM webhook_fanouts f JOIN events e ON e.id = f.event_id
WHERE e.type = $1 AND e.subject LIKE '%reasons-%'`, noteEventType).Scan(&rows, &bytes, &endpoints); err != nil {
		return fmt.Errorf("read the fan-out summaries: %w", err)
	}
	written := int64(events * len(groups))
	b.r.Extra["reasons_summary_rows_per_event"] = Ratio(float64(rows), float64(written))
	b.r.Extra["reasons_summary_bytes_per_event"] = bytes
	b.r.Extra["reasons_summary_endpoints_per_event"] = endpoints
	if b.workCounting {
		// The summary's own cost, apart from the background work that the
		// per-delivery figures also count: its statement's calls during
		// the step's events, and their mean time.
		calls, total := after.calls-before.calls, after.ms-before.ms
		b.r.Extra["reasons_summary_statements_per_event"] = Ratio(float64(calls), float64(written))
		b.r.Extra["reasons_summary_ms_per_statement"] = Ratio(total, float64(calls))
	}
	if b.w2Rate > 0 {
		b.r.Extra["reasons_vs_w2_ratio"] = Ratio(rate, b.w2Rate)
	}
	b.r.Note("reasons: %d deliveries, %d summaries for %d events, %.0f bytes each (%.0f endpoints named)",
		out.Delivered, rows, written, bytes, endpoints)
	b.checkClean("reasons", out)
	return nil
}

// summaryWork is what pg_stat_statements counts of the summary's statement.
type summaryWork struct {
	calls int64
	ms    float64
}

// summaryWork reads the summary statement's calls and total time so far
// (zero without work counting).
func (b *ServerBench) summaryWork(ctx context.Context) (summaryWork, error) {
	var w summaryWork
	if !b.workCounting {
		return w, nil
	}
	err := b.Pool.QueryRow(ctx, `SELECT COALESCE(sum(calls), 0)::bigint, COALESCE(sum(total_exec_time), 0)::float8
FROM pg_stat_statements WHERE query LIKE 'INSERT INTO webhook_fanouts%'`).Scan(&w.calls, &w.ms)
	if err != nil {
		return w, fmt.Errorf("read the summary's statement counts: %w", err)
	}
	return w, nil
}
