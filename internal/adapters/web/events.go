package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

type poisonedData struct {
	Events []eventop.Event
	Next   string
	CSRF   string
}

func (h *Handler) poisonedList(c echo.Context, s *Session) error {
	if h.events.poisoned == nil {
		return h.fail(c, s, notDeclared("events.poisoned"))
	}
	in := eventop.PoisonedInput{PageInput: op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")}}
	p, err := h.events.poisoned.list.Call(c.Request().Context(), s.Caller, in)
	if err != nil {
		return h.fail(c, s, err)
	}
	d := poisonedData{Events: p.Data, CSRF: s.CSRFToken}
	if p.NextCursor != nil {
		d.Next = "/admin/events/poisoned?cursor=" + url.QueryEscape(*p.NextCursor)
	}
	return h.render(c, http.StatusOK, "poisoned", view{Title: "Poisoned events", Section: "events", Session: s, Notice: notice(c), Data: d})
}

func (h *Handler) eventRelease(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.events.poisoned == nil {
		return h.fail(c, s, notDeclared("events.release"))
	}
	if _, err := h.events.poisoned.release.Call(c.Request().Context(), s.Caller, eventop.IDInput{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/events/poisoned?notice=released")
}

// eventDelivery is a row of webhooks.event_deliveries.
type eventDelivery struct {
	delivery
	EndpointID    uuid.UUID
	EndpointURL   string
	EndpointState string
	// Wait says why a delivery that has not started waits (from the
	// fan-out's summary), "" otherwise.
	Wait string
}

// eventFilter is the events page's query: type and a time range, typed as
// datetime-local (UTC) or RFC 3339.
type eventFilter struct {
	Type, Since, Until string
}

// Query is the filter as a URL query (with a trailing '&' when not empty).
func (f eventFilter) Query() string {
	q := url.Values{}
	for k, v := range map[string]string{"type": f.Type, "since": f.Since, "until": f.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return ""
	}
	return q.Encode() + "&"
}

// rfc3339 turns a datetime-local value (taken as UTC) into RFC 3339; other
// text is passed on for the op to judge.
func rfc3339(v string) string {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

type eventListData struct {
	Events []eventop.Event
	// Outcomes are the events' delivery outcomes by id (nil when the op
	// is not declared: the column is left out).
	Outcomes   map[uuid.UUID]webhook.EventOutcome
	Filter     eventFilter
	Types      []domain.EventType
	Next, Prev string
}

func (h *Handler) eventList(c echo.Context, s *Session) error {
	f := eventFilter{Type: c.QueryParam("type"), Since: strings.TrimSpace(c.QueryParam("since")), Until: strings.TrimSpace(c.QueryParam("until"))}
	if h.events.log == nil {
		return h.fail(c, s, notDeclared("events.list"))
	}
	in := eventop.ListInput{PageInput: op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")}, Type: f.Type, Before: c.QueryParam("before")}
	if f.Since != "" {
		in.Since = rfc3339(f.Since)
	}
	if f.Until != "" {
		in.Until = rfc3339(f.Until)
	}
	p, err := h.events.log.list.Call(c.Request().Context(), s.Caller, in)
	if err != nil {
		return h.fail(c, s, err)
	}
	d := eventListData{Events: p.Data, Filter: f, Types: domain.EventTypes()}
	if h.events.outcomes != nil {
		ids := make([]string, len(p.Data))
		for i, ev := range p.Data {
			ids[i] = ev.ID.String()
		}
		list, err := h.events.outcomes.Call(c.Request().Context(), s.Caller, webhook.EventIDsInput{IDs: strings.Join(ids, ",")})
		if err != nil {
			return h.fail(c, s, err)
		}
		d.Outcomes = make(map[uuid.UUID]webhook.EventOutcome, len(list.Data))
		for _, o := range list.Data {
			d.Outcomes[o.EventID] = o
		}
	}
	if p.NextCursor != nil {
		d.Next = "/admin/events?" + f.Query() + "cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if p.PrevCursor != nil {
		d.Prev = "/admin/events?" + f.Query() + "before=" + url.QueryEscape(*p.PrevCursor)
	}
	return h.render(c, http.StatusOK, "events", view{Title: "Events", Section: "event-log", Session: s, Data: d})
}

type eventShowData struct {
	Event      eventop.Event
	DataJSON   string
	Deliveries []eventDelivery
	// HasWebhooks tells whether the deliveries op is declared.
	HasWebhooks bool
	// Fanout is the fan-out's account of the endpoints that got no
	// delivery, or got it late (nil when the op is not declared).
	Fanout *webhook.EventFanout
	// Refresh is true while the event is not fanned out yet or a delivery
	// of it is not final: the deliveries refresh themselves.
	Refresh bool
}

func (h *Handler) eventShow(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.events.log == nil {
		return h.fail(c, s, notDeclared("events.get"))
	}
	ctx := c.Request().Context()
	ev, err := h.events.log.get.Call(ctx, s.Caller, eventop.IDInput{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := eventShowData{Event: ev, HasWebhooks: h.events.deliveries != nil}
	if b, err := json.MarshalIndent(ev.Data, "", "  "); err == nil {
		d.DataJSON = string(b)
	}
	if d.HasWebhooks {
		list, err := h.events.deliveries.Call(ctx, s.Caller, webhook.EventIDInput{ID: id})
		if err != nil {
			return h.fail(c, s, err)
		}
		d.Refresh = ev.FannedOutAt == nil && ev.PoisonedAt == nil
		for _, ed := range list.Data {
			dv := deliveryOf(ed.Delivery)
			d.Refresh = d.Refresh || !dv.Final()
			d.Deliveries = append(d.Deliveries, eventDelivery{delivery: dv,
				EndpointID: ed.EndpointID, EndpointURL: ed.EndpointURL, EndpointState: ed.EndpointState})
		}
	}
	if h.events.fanout != nil {
		f, err := h.events.fanout.Call(ctx, s.Caller, webhook.EventIDInput{ID: id})
		if err != nil {
			return h.fail(c, s, err)
		}
		d.Fanout = &f
		waits := map[uuid.UUID]string{}
		for _, e := range f.Endpoints {
			if e.Delivered {
				waits[e.EndpointID] = e.Text
			}
		}
		for i, del := range d.Deliveries {
			if del.State == "scheduled" || del.State == "pending" {
				d.Deliveries[i].Wait = waits[del.EndpointID]
			}
		}
	}
	return h.render(c, http.StatusOK, "event", view{Title: "Event " + ev.Type, Section: "event-log", Session: s, Data: d})
}
