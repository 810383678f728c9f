package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
)

// apiKey is an API key as api_keys.list returns it (never the key).
type apiKey struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// Key is only in the answer of api_keys.issue.
	Key string `json:"key"`
}

type apiKeysData struct {
	Keys []apiKey
	Name string
	CSRF string
	// Issued is the key just issued, shown this once.
	Issued *apiKey
}

func (h *Handler) listAPIKeys(c echo.Context, s *Session) ([]apiKey, error) {
	var l struct {
		Data []apiKey `json:"data"`
	}
	err := h.call(c.Request().Context(), s, "api_keys.list", nil, &l)
	return l.Data, err
}

func (h *Handler) apiKeysPage(c echo.Context, s *Session) error {
	keys, err := h.listAPIKeys(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "apikeys", view{Title: "API keys", Section: "api-keys", Session: s, Notice: notice(c),
		Data: apiKeysData{Keys: keys, CSRF: s.CSRFToken}})
}

func (h *Handler) apiKeyIssue(c echo.Context, s *Session) error {
	name := strings.TrimSpace(c.FormValue("name"))
	var issued apiKey
	err := h.call(c.Request().Context(), s, "api_keys.issue", map[string]any{"name": name}, &issued)
	keys, lerr := h.listAPIKeys(c, s)
	if lerr != nil {
		return h.fail(c, s, lerr)
	}
	if err != nil {
		status, detail := h.describe(c, err)
		return h.render(c, status, "apikeys", view{Title: "API keys", Section: "api-keys", Session: s, Error: detail,
			Data: apiKeysData{Keys: keys, Name: name, CSRF: s.CSRFToken}})
	}
	// The key is in this answer only; the page replaces its history entry
	// with the list, so a reload does not show (or issue) it again.
	return h.render(c, http.StatusCreated, "apikeys", view{Title: "API key issued", Section: "api-keys", Session: s,
		Data: apiKeysData{Keys: keys, CSRF: s.CSRFToken, Issued: &issued}})
}

func (h *Handler) apiKeyRevoke(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		keys, err := h.listAPIKeys(c, s)
		if err != nil {
			return h.fail(c, s, err)
		}
		name := ""
		for _, k := range keys {
			if k.ID == id {
				name = k.Name + " (" + k.Prefix + "…)"
			}
		}
		if name == "" {
			return h.fail(c, s, domain.ErrNotFound)
		}
		return h.confirm(c, s, "api-keys", confirmData{
			Heading: "Revoke API key?", Action: "/admin/api-keys/" + id.String() + "/revoke", Button: "Revoke key", Back: "/admin/api-keys", Danger: true,
			Lines: []string{"The key " + name + " stops working at once: every request made with it is refused with 401. This cannot be undone; issue a new key to replace it."},
		})
	}
	if err := h.call(c.Request().Context(), s, "api_keys.revoke", map[string]any{"id": id}, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/api-keys?notice=key_revoked")
}
