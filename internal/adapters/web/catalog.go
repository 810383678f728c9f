package web

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// catalogEntry is an entry ready for the page: JSON indented for reading.
type catalogEntry struct {
	webhook.EventTypeView
	Schema, Body string
}

type catalogData struct {
	Types                   []catalogEntry
	Internal, External      int
	CanPublish, CanEndpoint bool
}

// eventCatalog shows every event type an endpoint can subscribe to: what it
// records, who produces it, the schema of its data and an example body.
func (h *Handler) eventCatalog(c echo.Context, s *Session) error {
	if h.events.types == nil {
		return h.fail(c, s, notDeclared("webhooks.event_types"))
	}
	list, err := h.events.types.Call(c.Request().Context(), s.Caller, op.Empty{})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := catalogData{CanPublish: h.has("events.publish"), CanEndpoint: h.has("webhooks.create")}
	for _, t := range list.Data {
		d.Types = append(d.Types, catalogEntry{EventTypeView: t, Schema: indentJSON(t.DataSchema), Body: indentJSON(t.Example)})
		if t.Publishable {
			d.External++
		} else {
			d.Internal++
		}
	}
	return h.render(c, http.StatusOK, "catalog", view{Title: "Event catalog", Section: "catalog", Session: s, Notice: notice(c), Data: d})
}

// indentJSON returns raw indented by two spaces, or as it is when it is not
// JSON.
func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
