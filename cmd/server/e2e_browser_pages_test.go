package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// The owner's pages driven in a real browser: first contact, API keys,
// notes, inbound source management and message detail, supplier
// connections, the account, the confirmation steps of rotations and
// deletes, and River UI's link back.

// submit clicks the submit button of the form whose action is action.
func submit(action string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(`form[action="` + action + `"] button[type=submit]`))
}

// waitNotice waits for the notice a redirect after a form shows.
func (b *browser) waitNotice(text string) {
	b.t.Helper()
	b.waitFor(`(document.querySelector(".notice") || {textContent: ""}).textContent.includes(`+strconv.Quote(text)+`)`, 30*time.Second)
}

// confirmStep requires the confirmation page with text, then confirms.
func (b *browser) confirmStep(text string) {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.CSS("#confirm-button")))
	b.snap("confirm")
	require.Contains(b.t, b.innerText("#confirm"), text)
	b.do(chromedp.Click(chromedp.CSS("#confirm-button")))
}

func TestAdminOwnerPagesInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	ctx := context.Background()

	// First contact: / leads to the sign-in form, then to the overview.
	b.do(chromedp.Navigate(ts.URL + "/"))
	b.waitFor(`document.querySelector("#email") !== null`, 15*time.Second)
	b.login(ts, o)
	b.waitFor(`location.pathname === "/admin" && document.querySelector("#attention") !== null`, 15*time.Second)
	nav := b.text("nav")
	for _, item := range []string{"Notes", "API keys", "Account", "Suppliers"} {
		require.Contains(t, nav, item)
	}
	b.do(chromedp.Navigate(ts.URL+"/admin/no-such-page"), chromedp.WaitVisible(chromedp.CSS("h1")))
	require.Equal(t, "Page not found", b.innerText("h1"))
	require.Contains(t, b.text("nav"), "Webhooks", "the 404 page keeps the navigation")
	b.snap("not-found")

	// API keys: issued and shown once, then revoked after a confirmation.
	b.do(chromedp.Navigate(ts.URL+"/admin/api-keys"), chromedp.WaitVisible(chromedp.CSS("#name")))
	require.Empty(t, b.unlabelled())
	b.snap("api-keys")
	b.do(chromedp.SendKeys(chromedp.CSS("#name"), "browser key"), submit("/admin/api-keys"), chromedp.WaitVisible(chromedp.CSS("#secret")))
	key := b.inputValue("#secret")
	require.True(t, strings.HasPrefix(key, "smk_"), key)
	status, body := ts.do(t, http.MethodGet, "/api/admin/me", key, "")
	require.Equal(t, http.StatusOK, status, body)
	b.snap("api-key-issued")
	b.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#keys")))
	require.Equal(t, ts.URL+"/admin/api-keys", b.location())
	require.NotContains(t, b.html(), key, "the key is shown once")
	var keys struct {
		Data []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"data"`
	}
	apiGet(t, ts, o.Key, "/api/admin/api-keys", &keys)
	keyID := ""
	for _, k := range keys.Data {
		if k.Name == "browser key" {
			keyID = k.ID
		}
	}
	require.NotEmpty(t, keyID)
	b.do(chromedp.Click(chromedp.CSS(`tr[data-key="` + keyID + `"] button`)))
	b.confirmStep("stops working at once")
	b.do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	status, _ = ts.do(t, http.MethodGet, "/api/admin/me", key, "")
	require.Equal(t, http.StatusUnauthorized, status, "the revoked key is refused")

	// Notes: create, publish, edit, search, unpublish, delete.
	b.do(chromedp.Navigate(ts.URL+"/admin/notes"), chromedp.WaitVisible(chromedp.CSS(`a[href="/admin/notes/new"]`)))
	require.Empty(t, b.unlabelled())
	b.do(chromedp.Click(chromedp.CSS(`a[href="/admin/notes/new"]`)), chromedp.WaitVisible(chromedp.CSS("#title")))
	require.Empty(t, b.unlabelled(), "the note form labels every field")
	b.do(
		chromedp.SendKeys(chromedp.CSS("#title"), "Browser garden"),
		chromedp.SendKeys(chromedp.CSS("#tags"), "plants, e2e"),
		chromedp.SendKeys(chromedp.CSS("#body"), "Tomatoes and zucchini grow here."),
		submit("/admin/notes"),
		chromedp.WaitVisible(chromedp.CSS("#note-uri")),
	)
	noteURL := b.location()
	noteID := strings.TrimSuffix(strings.TrimPrefix(noteURL, ts.URL+"/admin/notes/"), "?notice=note_saved")
	require.Contains(t, b.innerText("#note-state"), "Draft")
	b.snap("note")
	b.do(chromedp.Click(chromedp.CSS(`form[action$="/publish"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/unpublish"] button`)))
	var n struct {
		Title     string   `json:"title"`
		Published bool     `json:"published"`
		Tags      []string `json:"tags"`
	}
	apiGet(t, ts, o.Key, "/api/admin/notes/"+noteID, &n)
	require.True(t, n.Published)
	require.Equal(t, []string{"plants", "e2e"}, n.Tags)
	b.do(
		chromedp.SetValue(chromedp.CSS("#title"), "Browser vegetable garden"),
		chromedp.Click(chromedp.CSS(`#note-form button[type=submit]`)),
	)
	b.waitNotice("Note saved.")
	apiGet(t, ts, o.Key, "/api/admin/notes/"+noteID, &n)
	require.Equal(t, "Browser vegetable garden", n.Title)
	require.True(t, n.Published, "saving the form keeps the note published")
	require.Eventually(t, func() bool {
		status, body := ts.do(t, http.MethodGet, "/api/admin/search?q=zucchini", o.Key, "")
		return status == http.StatusOK && strings.Contains(body, noteID)
	}, 30*time.Second, 100*time.Millisecond, "the note was never indexed")
	b.do(chromedp.Navigate(ts.URL+"/admin/notes?q=zucchini"), chromedp.WaitVisible(chromedp.CSS("#hits")))
	require.Contains(t, b.innerText("#hits"), "Browser vegetable garden")
	b.snap("notes-search")
	b.do(chromedp.Navigate(noteURL), chromedp.WaitVisible(chromedp.CSS(`form[action$="/unpublish"] button`)),
		chromedp.Click(chromedp.CSS(`form[action$="/unpublish"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/publish"] button`)))
	apiGet(t, ts, o.Key, "/api/admin/notes/"+noteID, &n)
	require.False(t, n.Published)
	b.do(chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)))
	b.confirmStep("is deleted")
	b.do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	status, _ = ts.do(t, http.MethodGet, "/api/admin/notes/"+noteID, o.Key, "")
	require.Equal(t, http.StatusNotFound, status)

	// An inbound source: what processing does, edit, a message's detail,
	// replay of every dead letter, rotation and delete after confirmation.
	srcID := (&isolationFixture{ts: ts, A: testOwner{ID: o.ID, Key: o.Key}}).createAsA(t, "/api/admin/inbound-sources", `{"name":"Shop","verifier":"standard-webhooks"}`)
	var created struct {
		Secret string `json:"secret"`
	}
	sourcePage := ts.URL + "/admin/inbound/" + srcID
	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS("#processing")))
	require.Contains(t, b.innerText("#processing"), "No supplier connection uses this source")
	require.Contains(t, b.html(), "never (set at creation")
	b.do(chromedp.Click(chromedp.CSS(`a[href="/admin/inbound/`+srcID+`/edit"]`)), chromedp.WaitVisible(chromedp.CSS("#tolerance")))
	require.Empty(t, b.unlabelled())
	b.do(chromedp.SetValue(chromedp.CSS("#name"), "Shop payments"), chromedp.SetValue(chromedp.CSS("#tolerance"), "120"),
		submit("/admin/inbound/"+srcID+"/edit"), chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Equal(t, "Shop payments", b.innerText("h1"))
	var src struct {
		ToleranceSeconds int `json:"tolerance_seconds"`
	}
	apiGet(t, ts, o.Key, "/api/admin/inbound-sources/"+srcID, &src)
	require.Equal(t, 120, src.ToleranceSeconds)

	// A request with a forged signature is refused, and the source page
	// says so.
	forged, err := http.NewRequest(http.MethodPost, ts.URL+"/hooks/"+srcID, strings.NewReader(`{"forged":true}`))
	require.NoError(t, err)
	forged.Header.Set("Content-Type", "application/json")
	forged.Header.Set("webhook-id", "msg_forged")
	forged.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	forged.Header.Set("webhook-signature", "v1,Zm9yZ2VkIHNpZ25hdHVyZSBvZiB0aGlydHktdHdvIGI=")
	bad, err := http.DefaultClient.Do(forged)
	require.NoError(t, err)
	bad.Body.Close()
	require.Equal(t, http.StatusUnauthorized, bad.StatusCode)
	require.Eventually(t, func() bool {
		_, body := ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+srcID+"/refusals", o.Key, "")
		return strings.Contains(body, `"reason"`)
	}, 30*time.Second, 100*time.Millisecond, "the refusal was never recorded")
	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS("tr.refusal")))
	require.Contains(t, b.innerText("tr.refusal"), "SIGNATURE")
	b.snap("inbound-refusals")

	// Rotate first, to sign the message with the secret the page shows.
	b.do(chromedp.Click(chromedp.CSS(`form[action$="/rotate"] button`)))
	b.confirmStep("keeps verifying for 24 hours")
	b.do(chromedp.WaitVisible(chromedp.CSS("#secret")))
	created.Secret = b.inputValue("#secret")
	require.Contains(t, b.innerText("#grace"), "The previous secret keeps verifying until")
	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS("#source-grace")))
	skey, err := standardwebhooks.ParseSecret(created.Secret)
	require.NoError(t, err)
	msgBody := []byte(`{"type":"order.paid","data":{"order":"o_1"}}`)
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/hooks/"+srcID, strings.NewReader(string(msgBody)))
	require.NoError(t, err)
	now := time.Now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", "msg_pages_1")
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", standardwebhooks.Sign(skey, "msg_pages_1", now, msgBody))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Eventually(t, func() bool {
		_, body := ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+srcID+"/messages", o.Key, "")
		return strings.Contains(body, `"state":"done"`)
	}, 30*time.Second, 50*time.Millisecond)
	_, err = ts.App.Pool.Exec(ctx, `UPDATE inbound_messages SET state = 'dead', dead_at = now(), done_at = NULL, last_error = 'pages e2e: failed for good' WHERE source_id = $1`, srcID)
	require.NoError(t, err)
	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS("tr.message a")))
	b.do(chromedp.Click(chromedp.CSS("tr.message a")), chromedp.WaitVisible(chromedp.CSS("#message-body")))
	require.Contains(t, b.innerText("#message-body"), `"order": "o_1"`, "the body, indented")
	headers := b.innerText("#message-headers")
	require.Contains(t, strings.ToLower(headers), "webhook-id")
	require.Contains(t, headers, "msg_pages_1")
	require.Contains(t, b.innerText("#message-state"), "dead")
	b.snap("inbound-message")
	// Replay all asks first: cancelling replays nothing.
	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS("#replay-all button")),
		chromedp.Click(chromedp.CSS("#replay-all button")), chromedp.WaitVisible(chromedp.CSS("#confirm")),
		chromedp.Click(chromedp.CSS("#confirm a.button")), chromedp.WaitVisible(chromedp.CSS("#replay-all button")))
	require.Equal(t, sourcePage, b.location())
	require.True(t, value(b, chromedp.Evaluate[bool](`document.querySelector("tr.dead-letter") !== null`)), "a cancelled replay leaves the dead letter")
	_, body = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+srcID+"/messages", o.Key, "")
	require.Contains(t, body, `"state":"dead"`, "a cancelled replay leaves the message dead")
	b.do(chromedp.Click(chromedp.CSS("#replay-all button")))
	b.confirmStep("Each dead letter is processed again")
	b.do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Contains(t, b.innerText(".notice"), "1 dead letters replayed")
	b.waitFor(`document.querySelector("tr.dead-letter") === null && document.querySelector('tr.message[data-state="done"]') !== null`, 60*time.Second)

	// Supplier connections: connected on this source, shown on its page.
	b.do(chromedp.Navigate(ts.URL+"/admin/suppliers?source="+srcID), chromedp.WaitVisible(chromedp.CSS("#connect-form")))
	require.Empty(t, b.unlabelled())
	b.do(chromedp.SendKeys(chromedp.CSS("#name"), "Acme payments"), chromedp.SendKeys(chromedp.CSS("#supplier"), "acme"),
		submit("/admin/suppliers"), chromedp.WaitVisible(chromedp.CSS("tr.connection")))
	require.Contains(t, b.innerText("tr.connection"), "Shop payments")
	b.snap("suppliers")
	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS("#processing")))
	require.Contains(t, b.innerText("#processing"), "Acme payments")
	b.do(chromedp.Navigate(ts.URL+"/admin/suppliers"), chromedp.WaitVisible(chromedp.CSS("tr.connection button")),
		chromedp.Click(chromedp.CSS("tr.connection button")))
	b.confirmStep("Its inbound source stays")
	b.do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Contains(t, b.html(), "No supplier connections yet")

	b.do(chromedp.Navigate(sourcePage), chromedp.WaitVisible(chromedp.CSS(`form[action$="/delete"] button`)),
		chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)))
	b.confirmStep("deleted with its whole inbox")
	b.do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	status, _ = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+srcID, o.Key, "")
	require.Equal(t, http.StatusNotFound, status)

	// An endpoint's rotation: confirmation, the 24 h grace, the snippets.
	sink := newHookSink(t)
	epID := (&isolationFixture{ts: ts, A: testOwner{ID: o.ID, Key: o.Key}}).createAsA(t, "/api/admin/webhooks", `{"url":"`+sink.URL+`/hook","event_types":["webhook.test"]}`)
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks/"+epID), chromedp.WaitVisible(chromedp.CSS("#verify-fold summary")))
	require.False(t, value(b, chromedp.Evaluate[bool](`document.querySelector("#verify").checkVisibility()`)), "the snippets are folded")
	b.do(chromedp.Click(chromedp.CSS("#verify-fold summary")), chromedp.WaitVisible(chromedp.CSS("#verify")))
	require.Contains(t, b.innerText("#verify"), "standardwebhooks")
	b.do(chromedp.Click(chromedp.CSS(`form[action$="/rotate"] button`)))
	b.confirmStep("stays valid for 24 hours")
	b.do(chromedp.WaitVisible(chromedp.CSS("#grace")))
	require.Contains(t, b.innerText("#grace"), "The previous secret keeps signing until")
	var prevUntil time.Time
	require.NoError(t, ts.App.Pool.QueryRow(ctx, `SELECT prev_secret_until FROM webhook_endpoints WHERE id = $1`, epID).Scan(&prevUntil))
	require.Contains(t, b.innerText("#grace"), prevUntil.UTC().Format("2006-01-02 15:04"), "the page shows the grace the server keeps")
	b.snap("webhook-rotated")
	b.do(chromedp.Click(chromedp.CSS("#continue")), chromedp.WaitVisible(chromedp.CSS("#endpoint-grace")))
	require.Contains(t, b.innerText("#endpoint-grace"), prevUntil.UTC().Format("2006-01-02 15:04"), "the endpoint page shows the grace")

	// The account: email, then password (which signs every session out).
	b.do(chromedp.Navigate(ts.URL+"/admin/account"), chromedp.WaitVisible(chromedp.CSS("#email-form")))
	require.Empty(t, b.unlabelled())
	require.Contains(t, b.innerText("tr.session[data-current]"), "this browser")
	b.snap("account")
	newEmail := "renamed-" + o.Email
	b.do(chromedp.SendKeys(chromedp.CSS("#email"), newEmail), chromedp.SendKeys(chromedp.CSS("#email-current-password"), o.Password),
		submit("/admin/account/email"), chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Equal(t, newEmail, b.innerText("#account-email"))
	b.do(chromedp.SendKeys(chromedp.CSS("#password-current"), "not the password"), chromedp.SendKeys(chromedp.CSS("#new-password"), "a brand new passphrase"),
		submit("/admin/account/password"), chromedp.WaitVisible(chromedp.CSS(".error")))
	require.Contains(t, b.innerText(".error"), "WRONG_PASSWORD")
	b.do(chromedp.SendKeys(chromedp.CSS("#password-current"), o.Password), chromedp.SendKeys(chromedp.CSS("#new-password"), "a brand new passphrase"),
		submit("/admin/account/password"))
	b.waitFor(`location.pathname === "/admin/login" && document.querySelector("#password") !== null`, 15*time.Second)
	b.login(ts, surfaceOwner{Email: newEmail, Password: "a brand new passphrase"})
	b.waitFor(`location.pathname === "/admin/account"`, 15*time.Second)

	// Readable at phone width.
	b.do(chromedp.EmulateViewport(390, 844), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#email-form")))
	require.True(t, b.fitsWidth(), "the account page scrolls sideways at 390 px")
	b.do(chromedp.Navigate(ts.URL+"/admin/api-keys"), chromedp.WaitVisible(chromedp.CSS("#keys")))
	require.True(t, b.fitsWidth(), "the API keys page scrolls sideways at 390 px")
	b.do(desktopViewport())

	// River's UI (the operator's) links back to the admin.
	_, err = ts.App.Commands.Owners.SetOperator(ctx, newEmail, true)
	require.NoError(t, err)
	b.do(chromedp.Navigate(ts.URL+"/admin/tasks"), chromedp.WaitVisible(chromedp.CSS("#standmeet-admin-link")))
	b.snap("tasks-link")
	b.do(chromedp.Click(chromedp.CSS("#standmeet-admin-link")))
	b.waitFor(`location.pathname === "/admin" && document.querySelector("#attention") !== null`, 15*time.Second)
}
