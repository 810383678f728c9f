package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestAccessPagesInABrowser drives the Access pages as an owner would:
// roles, a code issued and shown once, the scope check, an embed with an
// endpoint attached from the endpoint form, an unpublished note's event
// reaching it only while the code's role admits it, the revocation's
// confirmation, and an access request approved with a role and another
// rejected.
func TestAccessPagesInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := newSurfaceOwner(t, ts)
	rc := newReceiver(t, nil)

	b.do(chromedp.Navigate(ts.URL + "/admin/access"))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS("#role-create")))
	require.Equal(t, ts.URL+"/admin/access/roles", b.location())
	require.Empty(t, b.unlabelled(), "the role form labels every field")

	// A role that reads unpublished notes too, made in the form; a refused
	// glob shows as the form's error, not a 500.
	b.do(
		setValue("#role-name", "Readers"),
		setValue("#uri_globs", "raw://*"),
		chromedp.Click(chromedp.CSS(`#role-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".error")),
	)
	require.Contains(t, b.text(".error"), "raw:// notes are never admitted")
	require.Equal(t, "Readers", b.inputValue("#role-name"), "the form keeps what was typed")
	b.do(
		setValue("#uri_globs", "wiki://*"),
		chromedp.Click(chromedp.CSS(`#role-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#role-edit")),
	)
	require.Contains(t, b.text(".notice"), "Role created")
	var roles struct {
		Data []struct {
			ID            uuid.UUID `json:"id"`
			Name          string    `json:"name"`
			URIGlobs      []string  `json:"uri_globs"`
			PublishedOnly bool      `json:"published_only"`
		} `json:"data"`
	}
	apiGet(t, ts, o.Key, "/api/admin/roles", &roles)
	require.Len(t, roles.Data, 1)
	require.Equal(t, []string{"wiki://*"}, roles.Data[0].URIGlobs)
	require.False(t, roles.Data[0].PublishedOnly)
	readers := roles.Data[0].ID

	// Issue a code of it: its value is shown once.
	b.do(chromedp.Navigate(ts.URL+"/admin/access/codes"), chromedp.WaitVisible(chromedp.CSS("#code-issue")),
		setValue("#role_id", readers.String()), setValue("#code-label", "docs site"),
		chromedp.Click(chromedp.CSS(`#code-issue button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#secret")))
	codeValue := b.inputValue("#secret")
	require.True(t, strings.HasPrefix(codeValue, "smac_"), codeValue)
	b.snap("code issued")
	b.do(chromedp.Click(chromedp.CSS("#continue")), chromedp.WaitVisible(chromedp.CSS("#code-facts")))
	require.NotContains(t, b.html(), codeValue, "the code's page never shows its value")
	b.do(chromedp.Navigate(ts.URL+"/admin/access/codes"), chromedp.WaitVisible(chromedp.CSS("#codes")))
	require.NotContains(t, b.html(), codeValue, "nor does the list, after the one answer")
	codeID := value(b, chromedp.Evaluate[string](`document.querySelector("tr.code").getAttribute("data-code")`))

	// The scope check on the code's page.
	b.do(chromedp.Navigate(ts.URL+"/admin/access/codes/"+codeID), chromedp.WaitVisible(chromedp.CSS("#code-check")),
		setValue("#check-uri", "wiki://draft-plan"),
		chromedp.Click(chromedp.CSS(`#code-check button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#check-answer")))
	require.Equal(t, "true", value(b, chromedp.Evaluate[string](`document.querySelector("#check-answer").getAttribute("data-admitted")`)))
	b.do(setValue("#check-uri", "raw://diary"),
		chromedp.Click(chromedp.CSS(`#code-check button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#check-answer[data-reason="raw"]`)))
	require.Contains(t, b.text("#check-answer"), "raw:// notes never leave")

	// An embed of the code, and an endpoint attached to it in the endpoint form.
	b.do(chromedp.Navigate(ts.URL+"/admin/access/embeds"), chromedp.WaitVisible(chromedp.CSS("#embed-create")),
		setValue("#embed-name", "docs"), setValue("#code_id", codeID),
		chromedp.Click(chromedp.CSS(`#embed-create button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	embedPage, _, _ := strings.Cut(b.location(), "?")
	embedID := embedPage[strings.LastIndex(embedPage, "/")+1:]
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks/new"), chromedp.WaitVisible(chromedp.CSS("#scope")))
	require.Contains(t, b.text("#scope"), "Embed docs")
	b.do(setValue("#url", rc.URL+"/embed"),
		chromedp.Click(chromedp.CSS(`#scope input[value="`+embedID+`"]`)),
		setValue("#globs", "corpus.*"),
		chromedp.Click(chromedp.CSS(`form[action="/admin/webhooks"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#secret")))
	var eps struct {
		Data []struct {
			ID      uuid.UUID  `json:"id"`
			EmbedID *uuid.UUID `json:"embed_id"`
		} `json:"data"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks", &eps)
	require.Len(t, eps.Data, 1)
	require.NotNil(t, eps.Data[0].EmbedID)
	require.Equal(t, embedID, eps.Data[0].EmbedID.String(), "the form's scope attached the embed")
	endpointID := eps.Data[0].ID
	b.do(chromedp.Navigate(embedPage), chromedp.WaitVisible(chromedp.CSS("#embed-endpoints")))
	require.Contains(t, b.text("#embed-endpoints"), rc.URL+"/embed")

	// The role reads unpublished notes: a draft's event reaches the endpoint.
	draftID, _ := createNote(t, ts, o.Key, "wiki", "Draft plan", false)
	draft := noteEventsOf(t, ts, draftID)
	require.Len(t, draft, 1)
	waitFannedOut(t, ts, draft[0].ID)
	require.True(t, queuedFor(t, ts, endpointID)[draft[0].ID], "the embed's role admits the unpublished note")
	waitDelivery(t, ts, o.Key, endpointID, draft[0].ID, "completed")

	// Published slice only, edited on the role's page: the next draft stays in.
	b.do(chromedp.Navigate(ts.URL+"/admin/access/roles/"+readers.String()), chromedp.WaitVisible(chromedp.CSS("#role-edit")),
		chromedp.Click(chromedp.CSS(`#role-edit input[name="published_only"]`)),
		chromedp.Click(chromedp.CSS(`#role-edit button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	secondID, _ := createNote(t, ts, o.Key, "wiki", "Second draft", false)
	second := noteEventsOf(t, ts, secondID)
	waitFannedOut(t, ts, second[0].ID)
	require.False(t, queuedFor(t, ts, endpointID)[second[0].ID], "a published-only role does not admit an unpublished note")

	// Revoke: the first post asks; nothing changes until the confirmation.
	b.do(chromedp.Navigate(ts.URL+"/admin/access/codes/"+codeID), chromedp.WaitVisible(chromedp.CSS("#revoke")),
		chromedp.Click(chromedp.CSS("#revoke")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Contains(t, b.text("#confirm"), "Webhook endpoints attached to those embeds stop receiving")
	var code struct {
		Status string `json:"status"`
	}
	apiGet(t, ts, o.Key, "/api/admin/codes/"+codeID, &code)
	require.Equal(t, "active", code.Status, "asking changed nothing")
	b.do(chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS(`#code-state[data-status="revoked"]`)))
	apiGet(t, ts, o.Key, "/api/admin/codes/"+codeID, &code)
	require.Equal(t, "revoked", code.Status)
	pubID, _ := createNote(t, ts, o.Key, "wiki", "Published after the revocation", true)
	pub := noteEventsOf(t, ts, pubID)
	waitFannedOut(t, ts, pub[0].ID)
	require.False(t, queuedFor(t, ts, endpointID)[pub[0].ID], "a revoked code's embed admits nothing")

	// Access requests: approve one with a role (its code shown once), reject another.
	ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/access-requests?owner="+o.ID.String(), "", `{"name":"Bo","email":"bo@example.com","message":"may I read?"}`)
	ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/access-requests?owner="+o.ID.String(), "", `{"name":"Cy","email":"cy@example.com"}`)
	b.do(chromedp.Navigate(ts.URL+"/admin/access/requests"), chromedp.WaitVisible(chromedp.CSS("#requests")))
	require.Equal(t, 2, value(b, chromedp.Evaluate[int](`document.querySelectorAll('li.request[data-status="pending"]').length`)))
	require.Contains(t, b.text("li.request"), "Cy", "newest first")
	b.do(chromedp.Click(chromedp.CSS(`li.request:nth-child(2) form[action$="/approve"] button`)), chromedp.WaitVisible(chromedp.CSS("#secret")))
	approvedValue := b.inputValue("#secret")
	require.True(t, strings.HasPrefix(approvedValue, "smac_"))
	ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/access/redeem", "", `{"code":"`+approvedValue+`"}`)
	b.do(chromedp.Navigate(ts.URL+"/admin/access/requests"), chromedp.WaitVisible(chromedp.CSS("#requests")),
		chromedp.Click(chromedp.CSS(`li.request form[action$="/reject"] button`)), chromedp.WaitVisible(chromedp.CSS("#confirm")),
		chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Contains(t, b.text(".notice"), "Request rejected")
	require.Contains(t, b.html(), "No pending requests")
	b.do(chromedp.Navigate(ts.URL+"/admin/access/requests?status=all"), chromedp.WaitVisible(chromedp.CSS("#requests")))
	require.Equal(t, 1, value(b, chromedp.Evaluate[int](`document.querySelectorAll('li.request[data-status="approved"]').length`)))
	require.Equal(t, 1, value(b, chromedp.Evaluate[int](`document.querySelectorAll('li.request[data-status="rejected"]').length`)))
	require.True(t, b.fitsWidth())
}
