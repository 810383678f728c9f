package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

type apiKeysData struct {
	Keys []owner.APIKeyView
	Name string
	CSRF string
	// Issued is the key just issued, shown this once.
	Issued *owner.IssuedAPIKeyView
	// Scopes are the form's scope checkboxes, those the owner ticked
	// checked again when the form comes back with an error.
	Scopes []scopeChoice
}

// scopeChoice is one scope checkbox of the issue form.
type scopeChoice struct {
	Scope   op.Scope
	Grants  string
	Checked bool
}

// scopeGrants says in words what each scope lets a key do, as the form
// shows it beside the checkbox.
var scopeGrants = map[op.Scope]string{
	op.ScopeRead:     "every list, get and stats of webhooks, inbound sources, notes, events and access (not the account)",
	op.ScopePublish:  "publish events (events.publish, events.publish_batch)",
	op.ScopeWebhooks: "read and change webhook endpoints and their deliveries",
	op.ScopeInbound:  "read and change inbound sources, their messages and supplier connections",
	op.ScopeNotes:    "read and change notes, search them, import a vault",
}

// scopeChoices returns the form's checkboxes with checked ticked.
func scopeChoices(checked []op.Scope) []scopeChoice {
	out := make([]scopeChoice, 0, len(op.AllScopes))
	for _, sc := range op.AllScopes {
		out = append(out, scopeChoice{Scope: sc, Grants: scopeGrants[sc], Checked: slices.Contains(checked, sc)})
	}
	return out
}

// formScopes reads the ticked scope checkboxes: none ticked is a full key
// (nil), as leaving the API's field out is.
func formScopes(c echo.Context) []op.Scope {
	var out []op.Scope
	for _, v := range c.Request().PostForm["scopes"] {
		out = append(out, op.Scope(v))
	}
	return out
}

func (h *Handler) listAPIKeys(c echo.Context, s *Session) ([]owner.APIKeyView, error) {
	if h.owner == nil {
		return nil, notDeclared("api_keys.list")
	}
	l, err := h.owner.apiKeys.Call(c.Request().Context(), s.Caller, op.Empty{})
	return l.Data, err
}

func (h *Handler) apiKeysPage(c echo.Context, s *Session) error {
	keys, err := h.listAPIKeys(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "apikeys", view{Title: "API keys", Section: "api-keys", Session: s, Notice: notice(c),
		Data: apiKeysData{Keys: keys, CSRF: s.CSRFToken, Scopes: scopeChoices(nil)}})
}

func (h *Handler) apiKeyIssue(c echo.Context, s *Session) error {
	name := strings.TrimSpace(c.FormValue("name"))
	if h.owner == nil {
		return h.fail(c, s, notDeclared("api_keys.issue"))
	}
	scopes := formScopes(c)
	issued, err := h.owner.issueAPIKey.Call(c.Request().Context(), s.Caller, owner.IssueAPIKeyInput{Name: name, Scopes: scopes})
	keys, lerr := h.listAPIKeys(c, s)
	if lerr != nil {
		return h.fail(c, s, lerr)
	}
	if err != nil {
		status, detail := h.describe(c, err)
		return h.render(c, status, "apikeys", view{Title: "API keys", Section: "api-keys", Session: s, Error: detail,
			Data: apiKeysData{Keys: keys, Name: name, CSRF: s.CSRFToken, Scopes: scopeChoices(scopes)}})
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
	if err := h.revokeAPIKey(c, s, id); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/api-keys?notice=key_revoked")
}

func (h *Handler) revokeAPIKey(c echo.Context, s *Session, id uuid.UUID) error {
	if h.owner == nil {
		return notDeclared("api_keys.revoke")
	}
	_, err := h.owner.revokeAPIKey.Call(c.Request().Context(), s.Caller, owner.IDInput{ID: id})
	return err
}
