package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
)

// event is an event as the contract lists it.
type event struct {
	ID            uuid.UUID  `json:"id"`
	Type          string     `json:"type"`
	Subject       string     `json:"subject"`
	OccurredAt    time.Time  `json:"occurred_at"`
	RelayAttempts int        `json:"relay_attempts"`
	RelayError    *string    `json:"relay_error"`
	PoisonedAt    *time.Time `json:"poisoned_at"`
}

type poisonedData struct {
	Events []event
	Next   string
	CSRF   string
}

func (h *Handler) poisonedList(c echo.Context, s *Session) error {
	var p page[event]
	args := map[string]any{"limit": 50}
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if err := h.call(c.Request().Context(), s, "events.poisoned", args, &p); err != nil {
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
	if err := h.call(c.Request().Context(), s, "events.release", map[string]any{"id": id}, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/events/poisoned?notice=released")
}

// eventRow is an event as events.list returns it, with its fan-out.
type eventRow struct {
	event
	Data        map[string]any `json:"data"`
	FannedOutAt *time.Time     `json:"fanned_out_at"`
}

// eventDelivery is a row of webhooks.event_deliveries.
type eventDelivery struct {
	delivery
	EndpointID    uuid.UUID `json:"endpoint_id"`
	EndpointURL   string    `json:"endpoint_url"`
	EndpointState string    `json:"endpoint_state"`
}

type eventPage struct {
	Data       []eventRow `json:"data"`
	NextCursor *string    `json:"next_cursor"`
	PrevCursor *string    `json:"prev_cursor"`
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
	Events     []eventRow
	Filter     eventFilter
	Types      []domain.EventType
	Next, Prev string
}

func (h *Handler) eventList(c echo.Context, s *Session) error {
	f := eventFilter{Type: c.QueryParam("type"), Since: strings.TrimSpace(c.QueryParam("since")), Until: strings.TrimSpace(c.QueryParam("until"))}
	args := map[string]any{"limit": 50}
	if f.Type != "" {
		args["type"] = f.Type
	}
	if f.Since != "" {
		args["since"] = rfc3339(f.Since)
	}
	if f.Until != "" {
		args["until"] = rfc3339(f.Until)
	}
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if before := c.QueryParam("before"); before != "" {
		args["before"] = before
	}
	var p eventPage
	if err := h.call(c.Request().Context(), s, "events.list", args, &p); err != nil {
		return h.fail(c, s, err)
	}
	d := eventListData{Events: p.Data, Filter: f, Types: domain.EventTypes()}
	if p.NextCursor != nil {
		d.Next = "/admin/events?" + f.Query() + "cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if p.PrevCursor != nil {
		d.Prev = "/admin/events?" + f.Query() + "before=" + url.QueryEscape(*p.PrevCursor)
	}
	return h.render(c, http.StatusOK, "events", view{Title: "Events", Section: "event-log", Session: s, Data: d})
}

type eventShowData struct {
	Event      eventRow
	DataJSON   string
	Deliveries []eventDelivery
	// HasWebhooks tells whether the deliveries op is declared.
	HasWebhooks bool
}

func (h *Handler) eventShow(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	var ev eventRow
	if err := h.call(c.Request().Context(), s, "events.get", map[string]any{"id": id}, &ev); err != nil {
		return h.fail(c, s, err)
	}
	d := eventShowData{Event: ev, HasWebhooks: h.has("webhooks.event_deliveries")}
	if b, err := json.MarshalIndent(ev.Data, "", "  "); err == nil {
		d.DataJSON = string(b)
	}
	if d.HasWebhooks {
		var list struct {
			Data []eventDelivery `json:"data"`
		}
		if err := h.call(c.Request().Context(), s, "webhooks.event_deliveries", map[string]any{"id": id}, &list); err != nil {
			return h.fail(c, s, err)
		}
		d.Deliveries = list.Data
	}
	return h.render(c, http.StatusOK, "event", view{Title: "Event " + ev.Type, Section: "event-log", Session: s, Data: d})
}
