package web

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
)

// eventTypeDoc is one entry of webhooks.event_types as the contract returns
// it.
type eventTypeDoc struct {
	Name        string `json:"name"`
	Domain      string `json:"domain"`
	Description string `json:"description"`
	Producer    struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"producer"`
	Publishable bool            `json:"publishable"`
	DataSchema  json.RawMessage `json:"data_schema"`
	Example     json.RawMessage `json:"example"`
}

// catalogEntry is an entry ready for the page: JSON indented for reading.
type catalogEntry struct {
	eventTypeDoc
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
	var list struct {
		Data []eventTypeDoc `json:"data"`
	}
	if err := h.call(c.Request().Context(), s, "webhooks.event_types", nil, &list); err != nil {
		return h.fail(c, s, err)
	}
	d := catalogData{CanPublish: h.has("events.publish"), CanEndpoint: h.has("webhooks.create")}
	for _, t := range list.Data {
		d.Types = append(d.Types, catalogEntry{eventTypeDoc: t, Schema: indentJSON(t.DataSchema), Body: indentJSON(t.Example)})
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
