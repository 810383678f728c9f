package main

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

// TestEndpointRecordsWhoCreatedAndChangedIt: an endpoint created with an
// API key says so (created_by, updated_by), an edit through the admin form
// names the signed-in session as updated_by and keeps the creator, and the
// endpoint page shows both.
func TestEndpointRecordsWhoCreatedAndChangedIt(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	ctx := context.Background()
	var keyID uuid.UUID
	require.NoError(t, ts.App.Pool.QueryRow(ctx, `SELECT id FROM api_keys WHERE owner_id = $1 AND revoked_at IS NULL`, o.ID).Scan(&keyID))

	ep := createEndpoint(t, ts, o.Key, map[string]any{"url": "https://example.com/actors", "event_types": []string{"webhook.test"}})
	var view struct {
		CreatedBy *string `json:"created_by"`
		UpdatedBy *string `json:"updated_by"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+ep.ID.String(), &view)
	require.NotNil(t, view.CreatedBy)
	require.Equal(t, "api_key:"+keyID.String(), *view.CreatedBy)
	require.Equal(t, "api_key:"+keyID.String(), *view.UpdatedBy)

	u := signIn(t, ts, o)
	status, body, _ := u.post(t, "/admin/webhooks/"+ep.ID.String()+"/edit", url.Values{
		"url": {"https://example.com/actors"}, "event_types": {"webhook.test"}, "description": {"edited in the form"},
		"max_in_flight": {"1"}, "timeout_seconds": {"10"}, "max_attempts": {"18"}, "enabled": {"on"},
	})
	require.Less(t, status, 400, body)
	var sessionID uuid.UUID
	require.NoError(t, ts.App.Pool.QueryRow(ctx, `SELECT id FROM owner_sessions WHERE owner_id = $1 ORDER BY created_at DESC LIMIT 1`, o.ID).Scan(&sessionID))
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+ep.ID.String(), &view)
	require.Equal(t, "api_key:"+keyID.String(), *view.CreatedBy, "the creator stays")
	require.Equal(t, "session:"+sessionID.String(), *view.UpdatedBy)

	status, page, _ := u.get(t, "/admin/webhooks/"+ep.ID.String())
	require.Equal(t, http.StatusOK, status)
	page = html.UnescapeString(page)
	require.Contains(t, page, `<span id="endpoint-created-by">API key `+keyID.String()+`</span>`)
	require.Contains(t, page, `<span id="endpoint-updated-by">signed-in session `+sessionID.String()+`</span>`)
}

// TestEndpointFormsMarkTheTypesYourServicesPublish: the new and the edit
// forms mark exactly the external types (those only the owner's own
// services publish) among their checkboxes.
func TestEndpointFormsMarkTheTypesYourServicesPublish(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	ep := createEndpoint(t, ts, o.Key, map[string]any{"url": "https://example.com/form", "event_types": []string{"*"}})
	var external []string
	for _, et := range domain.WebhookEventTypes() {
		if et.Publishable() {
			external = append(external, et.Name)
		}
	}
	require.NotEmpty(t, external)
	marked := regexp.MustCompile(`data-external="([^"]+)"`)
	u := signIn(t, ts, o)
	for _, path := range []string{"/admin/webhooks/new", "/admin/webhooks/" + ep.ID.String() + "/edit"} {
		status, page, _ := u.get(t, path)
		require.Equal(t, http.StatusOK, status, path)
		var got []string
		for _, m := range marked.FindAllStringSubmatch(page, -1) {
			got = append(got, m[1])
		}
		require.ElementsMatch(t, external, got, "%s marks the types your services publish, and only those", path)
		require.Contains(t, page, `value="`+external[0]+`"> <code>`+external[0]+`</code> <span class="tag" data-external=`, path)
	}
}
