package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/window"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// healthOps are the ops of the overview, the endpoint's and the source's
// charts and the banner; each is optional, and a server without one shows
// the pages without its part.
type healthOps struct {
	stats         *op.Handle[webhook.WindowInput, webhook.Stats]
	endpointStats *op.Handle[webhook.EndpointWindowInput, webhook.Stats]
	attention     *op.Handle[op.Empty, op.List[webhook.Attention]]
	inbound       *op.Handle[inbound.StatsInput, inbound.Stats]
	sourceStats   *op.Handle[inbound.SourceStatsInput, inbound.Stats]
}

func healthOpsOf(ops op.Set) (*healthOps, error) {
	var o healthOps
	hs := handles{ops: ops}
	bindOptional(&hs, &o.stats, "webhooks.stats")
	bindOptional(&hs, &o.endpointStats, "webhooks.endpoint_stats")
	bindOptional(&hs, &o.attention, "webhooks.attention")
	bindOptional(&hs, &o.inbound, "inbound_sources.stats")
	bindOptional(&hs, &o.sourceStats, "inbound_sources.source_stats")
	if err := hs.err("the health charts need their ops with their own types"); err != nil {
		return nil, err
	}
	return &o, nil
}

// windowLink is one of the window choices above the charts.
type windowLink struct {
	Name, Href string
	Current    bool
}

func windowLinks(path, current string) []windowLink {
	var out []windowLink
	for _, w := range window.Windows {
		out = append(out, windowLink{Name: w.Name, Href: path + "?window=" + w.Name, Current: w.Name == current})
	}
	return out
}

// healthCharts are the charts of one page.
type healthCharts struct {
	Window  string
	Windows []windowLink
	Charts  []chart
	// SuccessRate is the window's succeeded share of the attempts, as a
	// percentage; empty without attempts.
	SuccessRate string
}

var (
	deliverySeries = []series{{"succeeded", "Succeeded"}, {"retrying", "Failed, retrying"}, {"gave_up", "Gave up"}}
	latencySeries  = []series{{"p50", "p50 (ms)"}, {"p99", "p99 (ms)"}}
	inboundSeries  = []series{{"accepted", "Accepted"}, {"refused", "Refused"}, {"dead", "Dead-lettered"}}
)

// deliveryCharts are the outcome and latency charts of st.
func deliveryCharts(prefix string, small bool, st webhook.Stats) ([]chart, string) {
	step := time.Duration(st.StepSeconds) * time.Second
	var out, lat []chartBucket
	for _, b := range st.Buckets {
		out = append(out, chartBucket{At: b.At, Values: map[string]*int{"succeeded": intp(b.Succeeded), "retrying": intp(b.Retrying), "gave_up": intp(b.GaveUp)}})
		lat = append(lat, chartBucket{At: b.At, Values: map[string]*int{"p50": b.P50MS, "p99": b.P99MS}})
	}
	outcomes := stackedChart(prefix+"deliveries", "Delivery attempts by outcome", small, deliverySeries, out, step)
	rate := ""
	if all := outcomes.Totals[0] + outcomes.Totals[1] + outcomes.Totals[2]; all > 0 {
		rate = formatPercent(outcomes.Totals[0], all)
	}
	return []chart{outcomes, lineChart(prefix+"latency", "Delivery latency", "ms", small, latencySeries, lat, step)}, rate
}

func inboundChart(prefix string, small bool, st inbound.Stats) chart {
	var bs []chartBucket
	for _, b := range st.Buckets {
		bs = append(bs, chartBucket{At: b.At, Values: map[string]*int{"accepted": intp(b.Accepted), "refused": intp(b.Refused), "dead": intp(b.DeadLettered)}})
	}
	return stackedChart(prefix+"inbound", "Inbound messages", small, inboundSeries, bs, time.Duration(st.StepSeconds)*time.Second)
}

func formatPercent(n, of int) string {
	return strconv.FormatFloat(float64(n)*100/float64(of), 'f', 1, 64) + "%"
}

// overviewData is the overview page.
type overviewData struct {
	Health      healthCharts
	Attention   []webhook.Attention
	DeadLetters []inbound.DeadLetterCount
	HasWebhooks bool
	HasInbound  bool
}

// overview is the landing page: the window's charts of every endpoint and
// source, and what needs the owner. A server without the chart ops lands
// on the endpoint list, as before it had them.
func (h *Handler) overview(c echo.Context, s *Session) error {
	if h.health.stats == nil && h.health.inbound == nil {
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks")
	}
	w, err := window.Of(c.QueryParam("window"))
	if err != nil {
		return h.fail(c, s, err)
	}
	ctx := c.Request().Context()
	d := overviewData{Health: healthCharts{Window: w.Name, Windows: windowLinks("/admin", w.Name)}}
	if h.health.stats != nil {
		d.HasWebhooks = true
		st, err := h.health.stats.Call(ctx, s.Caller, webhook.WindowInput{Window: w.Name})
		if err != nil {
			return h.fail(c, s, err)
		}
		var charts []chart
		charts, d.Health.SuccessRate = deliveryCharts("", false, st)
		d.Health.Charts = append(d.Health.Charts, charts...)
	}
	if h.health.attention != nil {
		att, err := h.health.attention.Call(ctx, s.Caller, op.Empty{})
		if err != nil {
			return h.fail(c, s, err)
		}
		d.Attention = att.Data
	}
	if h.health.inbound != nil {
		d.HasInbound = true
		st, err := h.health.inbound.Call(ctx, s.Caller, inbound.StatsInput{Window: w.Name})
		if err != nil {
			return h.fail(c, s, err)
		}
		d.Health.Charts = append(d.Health.Charts, inboundChart("", false, st))
		d.DeadLetters = st.DeadLetters
	}
	return h.render(c, http.StatusOK, "overview", view{Title: "Overview", Section: "overview", Session: s, Notice: notice(c), Data: d})
}

// endpointCharts are an endpoint page's small charts; nil without the op.
func (h *Handler) endpointCharts(c echo.Context, s *Session, id uuid.UUID) (*healthCharts, error) {
	if h.health.endpointStats == nil {
		return nil, nil
	}
	w, err := window.Of(c.QueryParam("window"))
	if err != nil {
		return nil, err
	}
	st, err := h.health.endpointStats.Call(c.Request().Context(), s.Caller, webhook.EndpointWindowInput{ID: id, Window: w.Name})
	if err != nil {
		return nil, err
	}
	hc := &healthCharts{Window: w.Name, Windows: windowLinks("/admin/webhooks/"+id.String(), w.Name)}
	hc.Charts, hc.SuccessRate = deliveryCharts("endpoint-", true, st)
	return hc, nil
}

// sourceCharts are a source page's small chart; nil without the op.
func (h *Handler) sourceCharts(c echo.Context, s *Session, id uuid.UUID) (*healthCharts, error) {
	if h.health.sourceStats == nil {
		return nil, nil
	}
	w, err := window.Of(c.QueryParam("window"))
	if err != nil {
		return nil, err
	}
	st, err := h.health.sourceStats.Call(c.Request().Context(), s.Caller, inbound.SourceStatsInput{ID: id, Window: w.Name})
	if err != nil {
		return nil, err
	}
	return &healthCharts{Window: w.Name, Windows: windowLinks("/admin/inbound/"+id.String(), w.Name),
		Charts: []chart{inboundChart("source-", true, st)}}, nil
}

// banner is what the banner on every page says: the endpoints disabled by
// the server or failing for an hour. A failure to read it costs the page
// nothing but the banner (it is logged).
func (h *Handler) banner(c echo.Context, s *Session) []webhook.Attention {
	if h.health == nil || h.health.attention == nil || s == nil {
		return nil
	}
	att, err := h.health.attention.Call(c.Request().Context(), s.Caller, op.Empty{})
	if err != nil {
		h.logger.Warn("health banner not read", zap.Error(err))
		return nil
	}
	var out []webhook.Attention
	for _, a := range att.Data {
		if a.Alarm {
			out = append(out, a)
		}
	}
	return out
}
