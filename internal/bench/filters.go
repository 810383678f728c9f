package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// benchFilter is the payload filter of the filtered fan-out: every note
// event the bench writes passes it, so both sides deliver the same events
// and the difference is the filter's evaluation alone.
const benchFilter = `{"data.op":{"$neq":"deleted"},"subject":{"$glob":"*://*"}}`

// runFilters is W2's fan-out with one payload filter per endpoint against
// W2 without: two sets of 100 endpoints (two owners), measured in turns,
// plain then filtered then filtered then plain, so drift in the machine's
// load falls on both. It reports the filtered rate with the plain one as
// its ceiling and their ratio, and a problem below 0.9.
func (b *ServerBench) runFilters(ctx context.Context) error {
	notes := func(int) []string { return []string{noteEventType} }
	every := func(int) bool { return true }
	plain, err := b.EndpointGroups(ctx, "filters-plain", 100, notes, every)
	if err != nil {
		return err
	}
	filtered, err := b.EndpointGroups(ctx, "filters-on", 100, notes, every)
	if err != nil {
		return err
	}
	for _, g := range filtered {
		for _, ep := range g.Endpoints {
			if err := g.Admin.Do(ctx, http.MethodPatch, "/api/admin/webhooks/"+ep.ServerID, json.RawMessage(`{"filter":`+benchFilter+`}`), nil); err != nil {
				return fmt.Errorf("set the filter of endpoint %s: %w", ep.ServerID, err)
			}
		}
	}
	events := b.o.scale(200)
	rates := map[string][]float64{}
	for i, side := range []string{"plain", "filtered", "filtered", "plain"} {
		groups := plain
		if side == "filtered" {
			groups = filtered
		}
		out, rate, err := b.runFanout(ctx, groups, fmt.Sprintf("filters-%s-%d", side, i), events)
		if err != nil {
			return err
		}
		b.checkClean("filters "+side, out)
		rates[side] = append(rates[side], rate)
	}
	p, f := mean(rates["plain"]), mean(rates["filtered"])
	b.r.Add(Figure{Key: "filters_deliveries_per_s", Label: fmt.Sprintf("W2 fan-out with a payload filter per endpoint, %d endpoints x %d events", 100, events),
		Unit: "/s", Value: f, Ceiling: "the same fan-out without filters, measured in turns", CeilingValue: p})
	ratio := Ratio(f, p)
	b.r.Extra["filters_vs_plain_ratio"] = ratio
	b.r.Note("filters: filtered %.0f and %.0f deliveries/s, plain %.0f and %.0f (in turns): %.2f of plain",
		rates["filtered"][0], rates["filtered"][1], rates["plain"][0], rates["plain"][1], ratio)
	if ratio < 0.9 {
		b.Problem("filters: the filtered fan-out ran at %.2f of the plain one (bound 0.90)", ratio)
	}
	return nil
}
