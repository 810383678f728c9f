package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
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
