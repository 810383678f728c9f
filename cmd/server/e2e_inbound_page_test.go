package main

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

// signingExample is the source page's copyable example, unescaped.
var signingExample = regexp.MustCompile(`(?s)<textarea id="signing-example"[^>]*>(.*?)</textarea>`)

// runSigningExample runs the example of the page with the secret pasted in,
// as a sender would (bash, openssl, curl).
func runSigningExample(t *testing.T, page, secret string) string {
	t.Helper()
	m := signingExample.FindStringSubmatch(page)
	require.NotNil(t, m, "the page has no signing example")
	script := html.UnescapeString(m[1])
	require.Contains(t, script, "SECRET='paste the secret here'")
	script = strings.Replace(script, "SECRET='paste the secret here'", "SECRET='"+secret+"'", 1)
	requireSenderTools(t)
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", script, out)
	return string(out)
}

// requireSenderTools skips the test when bash, openssl or curl is missing
// (make test installs them where it can), and fails it instead under
// STANDMEET_REQUIRE_SENDER_TOOLS=1 (CI).
func requireSenderTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "openssl", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("STANDMEET_REQUIRE_SENDER_TOOLS") == "1" {
				t.Fatalf("the signing example needs %s: %v", tool, err)
			}
			t.Skipf("the signing example needs %s, which is missing (make sender-tools installs it as root)", tool)
		}
	}
}

// sourceMessages counts the source's inbox messages.
func sourceMessages(t *testing.T, ts *testServer, id string) int {
	t.Helper()
	var n int
	require.NoError(t, ts.App.Pool.QueryRow(t.Context(), `SELECT count(*) FROM inbound_messages WHERE source_id = $1`, id).Scan(&n))
	return n
}

// TestInboundSourcePageSigningExamplesAreAccepted: for each kind, the
// source page's copyable example, with the secret pasted in and run as it
// is, posts a message the source accepts.
func TestInboundSourcePageSigningExamplesAreAccepted(t *testing.T) {
	t.Parallel()
	requireSenderTools(t)
	ts := startTestServer(t, testServerOptions{})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t)}
	u := signIn(t, ts, fx.A)
	for _, tc := range []struct {
		name, body, secret string
		headers            []string
	}{
		{name: "standard-webhooks", body: `{"name":"sw","verifier":"standard-webhooks"}`, headers: []string{"webhook-id", "webhook-timestamp", "webhook-signature"}},
		{name: "github", body: `{"name":"gh","verifier":"github","secret":"a github webhook secret"}`, secret: "a github webhook secret", headers: []string{"X-Hub-Signature-256", "X-GitHub-Delivery", "X-GitHub-Event"}},
		{name: "stripe", body: `{"name":"st","verifier":"stripe","secret":"whsec_stripePageExample0123"}`, secret: "whsec_stripePageExample0123", headers: []string{"Stripe-Signature"}},
		{name: "hmac, every option", body: `{"name":"hm","verifier":"hmac","secret":"its own provider secret","options":{"signature_header":"X-Sig","signature_prefix":"v1='",` +
			`"encoding":"base64","payload":"id.timestamp.body","timestamp_header":"X-Ts","timestamp_format":"unix_ms","id_header":"X-Id","event_type_header":"X-Event"}}`,
			secret: "its own provider secret", headers: []string{"X-Sig", "X-Ts", "X-Id", "X-Event"}},
		{name: "hmac, defaults", body: `{"name":"hd","verifier":"hmac","secret":"another provider secret","options":{"signature_header":"X-Signature"}}`,
			secret: "another provider secret", headers: []string{"X-Signature"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp := ts.do(t, http.MethodPost, "/api/admin/inbound-sources", fx.A.Key, tc.body)
			require.Equal(t, http.StatusCreated, status, resp)
			var src inboundSource
			require.NoError(t, json.Unmarshal([]byte(resp), &src))
			secret := tc.secret
			if secret == "" {
				secret = src.Secret
			}
			status, page, _ := u.get(t, "/admin/inbound/"+src.ID)
			require.Equal(t, http.StatusOK, status, page)
			for _, h := range tc.headers {
				require.Contains(t, page, "<code>"+h+"</code>", "the page names the header")
			}
			out := runSigningExample(t, page, secret)
			require.Equal(t, 1, sourceMessages(t, ts, src.ID), "the example's message was accepted: %s", out)
			// A wrong secret is refused: the example signs, it does not merely post.
			runSigningExample(t, page, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
			require.Equal(t, 1, sourceMessages(t, ts, src.ID), "a message signed with another secret was accepted")
		})
	}
}

// TestInboundSourcePageSaysWhatHappensToMessages: the page says the
// source records inbound.message.received and where it goes (no endpoint,
// then the subscribed one), shows for the newest messages the endpoints
// their event reached, and a source whose events are turned off in the
// edit form says so and its messages record none.
func TestInboundSourcePageSaysWhatHappensToMessages(t *testing.T) {
	t.Parallel()
	requireSenderTools(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t)}
	u := signIn(t, ts, fx.A)
	status, resp := ts.do(t, http.MethodPost, "/api/admin/inbound-sources", fx.A.Key, `{"name":"orders","verifier":"standard-webhooks"}`)
	require.Equal(t, http.StatusCreated, status, resp)
	var src inboundSource
	require.NoError(t, json.Unmarshal([]byte(resp), &src))
	page := func() string {
		status, body, _ := u.get(t, "/admin/inbound/"+src.ID)
		require.Equal(t, http.StatusOK, status, body)
		return body
	}

	body := page()
	require.Contains(t, body, "each accepted message records <code>"+domain.EventInboundMessageReceived+"</code>")
	require.Contains(t, body, "No endpoint subscribes to it yet")
	require.Contains(t, body, `/admin/webhooks/new?event_type=`+domain.EventInboundMessageReceived)
	status, form, _ := u.get(t, "/admin/webhooks/new?event_type="+domain.EventInboundMessageReceived)
	require.Equal(t, http.StatusOK, status, form)
	require.Regexp(t, `value="`+regexp.QuoteMeta(domain.EventInboundMessageReceived)+`"[^>]* checked`, form, "the link checks the type in the form")

	rc := newReceiver(t, nil)
	createEndpoint(t, ts, fx.A.Key, map[string]any{"url": rc.URL, "event_types": []string{"inbound.*"}})
	body = page()
	require.NotContains(t, body, "No endpoint subscribes")
	require.Contains(t, body, `">`+rc.URL+`</a>`, "the subscribed endpoint is listed")

	runSigningExample(t, body, src.Secret)
	require.Eventually(t, func() bool { return len(receivedEvents(t, rc)) == 1 }, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		return strings.Contains(page(), rc.URL+"</a> (delivered)")
	}, 30*time.Second, 100*time.Millisecond, "the message's row names the endpoint told")

	// Events off, through the edit form (the checkbox left unchecked).
	status, _, _ = u.post(t, "/admin/inbound/"+src.ID+"/edit", url.Values{"name": {"orders"}, "body_limit_bytes": {"1048576"}, "tolerance_seconds": {"300"}})
	require.Equal(t, http.StatusSeeOther, status)
	_, resp = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID, fx.A.Key, "")
	require.Contains(t, resp, `"record_events":false`)
	body = page()
	require.Contains(t, body, "This source records no events")
	runSigningExample(t, body, src.Secret)
	require.Equal(t, 2, sourceMessages(t, ts, src.ID))
	var events int
	require.NoError(t, ts.App.Pool.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE type = $1 AND data->>'source_id' = $2`,
		domain.EventInboundMessageReceived, src.ID).Scan(&events))
	require.Equal(t, 1, events, "the second message recorded no event")
	require.Contains(t, page(), ">no event</td>", "its row says so")
}
