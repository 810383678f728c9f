package main

// An endpoint's controls: a payload filter evaluated by the fan-out, and
// ed25519 (v1a) signing verified by receivers that hold only a public key.

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestWebhookFilterDeliversTheDeleteAndFiltersOutTheCreate(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := ts.newOwnerAccount(t)
	rc := newReceiver(t, nil)

	// A field no subscribed type has is refused, naming it; nothing is stored.
	for _, bad := range []struct{ filter, field string }{
		{`{"data.opp":{"$eq":"deleted"}}`, "data.opp"},
		{`{"data.code_id":{"$exists":true}}`, "data.code_id"},
		{`{"data.op":{"$regex":"del.*"}}`, "data.op"},
		{`"deleted"`, "filter"},
	} {
		status, body := ts.do(t, http.MethodPost, "/api/admin/webhooks", o.Key,
			`{"url":"`+rc.URL+`/h","event_types":["corpus.note.changed"],"filter":`+bad.filter+`}`)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "INVALID_FILTER", errCode(t, body), body)
		require.Contains(t, body, bad.field)
	}
	var n int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_endpoints WHERE owner_id = $1`, o.ID).Scan(&n))
	require.Zero(t, n, "a refused create stores nothing")

	id := createEndpointAPI(t, ts, o.Key, `{"url":"`+rc.URL+`/h","event_types":["corpus.note.changed"],"filter":{"data.op":{"$eq":"deleted"}}}`)
	ep := getEndpointRaw(t, ts, o.Key, id)
	require.JSONEq(t, `{"data.op":{"$eq":"deleted"}}`, string(ep["filter"]))

	// An update naming an unknown field changes nothing.
	status, body := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+id, o.Key, `{"filter":{"data.nope":1}}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "INVALID_FILTER", errCode(t, body))
	require.Contains(t, body, "data.nope")
	require.JSONEq(t, `{"data.op":{"$eq":"deleted"}}`, string(getEndpointRaw(t, ts, o.Key, id)["filter"]))

	note := func(op string, published, was bool) uuid.UUID {
		return recordEvent(t, ts, o.ID, "corpus.note.changed", "wiki://life/x", map[string]any{
			"op": op, "note_id": uuid.NewString(), "genre": "wiki", "parent_id": nil,
			"published": published, "was_published": was, "path_changed": false,
		})
	}
	created := note("created", true, false)
	deleted := note("deleted", false, true)
	waitDelivery(t, ts, o.Key, uuid.MustParse(id), deleted, "completed")
	v := waitFanout(t, ts, o.Key, created)
	require.Len(t, v.Endpoints, 1)
	require.Equal(t, id, v.Endpoints[0].EndpointID)
	require.Equal(t, "filtered_out", v.Endpoints[0].Reason)
	require.Contains(t, v.Endpoints[0].Text, "filter")
	for _, d := range deliveries(t, ts, o.Key, uuid.MustParse(id)) {
		require.NotEqual(t, created, d.EventID, "the create gets no delivery")
	}
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	var got thinBody
	require.NoError(t, json.Unmarshal(reqs[0].Body, &got))
	require.Equal(t, deleted.String(), got.ID)

	// The create's event page says so.
	c := signedIn(t, ts, o)
	status, page := ts.ownerDo(t, c, http.MethodGet, "/admin/events/"+created.String(), "", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `data-endpoint="`+id+`" data-reason="filtered_out"`)
	require.Contains(t, page, "filtered out")
}

// getEndpointRaw reads an endpoint's fields through the API.
func getEndpointRaw(t *testing.T, ts *testServer, key, id string) map[string]json.RawMessage {
	t.Helper()
	status, body := ts.do(t, http.MethodGet, "/api/admin/webhooks/"+id, key, "")
	require.Equal(t, http.StatusOK, status, body)
	var out map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return out
}

// nodeVerifyV1a verifies a webhook-signature value's v1a entries with
// Node's built-in crypto.verify, as a receiver in Node would: the raw
// public key becomes a key object through its SPKI DER prefix. It returns
// how many entries verify.
const nodeVerifyV1a = `
const c = require('crypto');
const raw = Buffer.from(process.env.PUB.slice('whpk_'.length), 'base64');
const key = c.createPublicKey({key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki'});
const msg = Buffer.concat([Buffer.from(process.env.MSG_ID + '.' + process.env.MSG_TS + '.'), Buffer.from(process.env.BODY, 'base64')]);
let n = 0;
for (const e of process.env.SIG.split(' ')) {
  const [v, s] = e.split(',');
  if (v === 'v1a' && c.verify(null, msg, key, Buffer.from(s, 'base64'))) n++;
}
process.stdout.write(String(n));
`

// v1aVerifiers counts the v1a entries of a request that verify with a
// public key, in Go's crypto/ed25519 and in Node; both must agree.
func v1aVerifiers(t *testing.T, node, public string, r received) int {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(public, "whpk_"))
	require.NoError(t, err)
	require.Len(t, raw, ed25519.PublicKeySize)
	id, ts, sig := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature")
	msg := []byte(id + "." + ts + "." + string(r.Body))
	goCount := 0
	for _, e := range strings.Split(sig, " ") {
		v, s, _ := strings.Cut(e, ",")
		b, err := base64.StdEncoding.DecodeString(s)
		if v == "v1a" && err == nil && ed25519.Verify(raw, msg, b) {
			goCount++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", nodeVerifyV1a)
	cmd.Env = []string{"PUB=" + public, "MSG_ID=" + id, "MSG_TS=" + ts, "SIG=" + sig, "BODY=" + base64.StdEncoding.EncodeToString(r.Body)}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, goCount, mustAtoi(t, string(out)), "Go and Node agree")
	return goCount
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	require.NoError(t, json.Unmarshal([]byte(s), &n), s)
	return n
}

func TestWebhookEd25519SignaturesVerifyInGoAndNodeAcrossARotation(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the Node half of the check needs it")
	}
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := ts.newOwnerAccount(t)
	rc := newReceiver(t, nil)

	status, body := ts.do(t, http.MethodPost, "/api/admin/webhooks", o.Key, `{"url":"`+rc.URL+`/h","event_types":["code.*"],"signing":"rsa"}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "INVALID_SIGNING", errCode(t, body))

	status, body = ts.do(t, http.MethodPost, "/api/admin/webhooks", o.Key, `{"url":"`+rc.URL+`/h","event_types":["code.*"],"signing":"ed25519"}`)
	require.Equal(t, http.StatusCreated, status, body)
	var ep struct {
		ID        uuid.UUID `json:"id"`
		Signing   string    `json:"signing"`
		PublicKey string    `json:"public_key"`
		Secret    *string   `json:"secret"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ep))
	require.Equal(t, "ed25519", ep.Signing)
	require.True(t, strings.HasPrefix(ep.PublicKey, "whpk_"), body)
	require.Nil(t, ep.Secret, "the private key is never shown")
	var sealed []byte
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT secret_enc FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&sealed))
	require.NotContains(t, string(sealed), "whsk_", "the private key is sealed at rest")

	ev1, _ := sendTest(t, ts, o.Key, ep.ID)
	waitDelivery(t, ts, o.Key, ep.ID, ev1, "completed")
	first := rc.requests()[0]
	require.Regexp(t, `^v1a,[A-Za-z0-9+/]{86}==$`, first.Header.Get("webhook-signature"))
	require.Equal(t, 1, v1aVerifiers(t, node, ep.PublicKey, first))

	// A changed byte of the body, the id or the timestamp fails.
	changed := first
	changed.Body = append([]byte(nil), first.Body...)
	changed.Body[len(changed.Body)/2] ^= 0x01
	require.Zero(t, v1aVerifiers(t, node, ep.PublicKey, changed))
	changed = first
	changed.Header = first.Header.Clone()
	changed.Header.Set("webhook-timestamp", first.Header.Get("webhook-timestamp")+"0")
	require.Zero(t, v1aVerifiers(t, node, ep.PublicKey, changed))

	// During the rotation grace both keys sign: either one verifies.
	var rot struct {
		Secret    *string `json:"secret"`
		PublicKey string  `json:"public_key"`
	}
	require.NoError(t, json.Unmarshal([]byte(bodyOf(t, ts, http.StatusOK, http.MethodPost, "/api/admin/webhooks/"+ep.ID.String()+"/rotate-secret", o.Key)), &rot))
	require.Nil(t, rot.Secret)
	require.True(t, strings.HasPrefix(rot.PublicKey, "whpk_"))
	require.NotEqual(t, ep.PublicKey, rot.PublicKey)
	view := getEndpointRaw(t, ts, o.Key, ep.ID.String())
	require.JSONEq(t, `"`+rot.PublicKey+`"`, string(view["public_key"]))
	require.JSONEq(t, `"`+ep.PublicKey+`"`, string(view["previous_public_key"]))

	ev2, _ := sendTest(t, ts, o.Key, ep.ID)
	waitDelivery(t, ts, o.Key, ep.ID, ev2, "completed")
	second := rc.requests()[1]
	require.Len(t, strings.Split(second.Header.Get("webhook-signature"), " "), 2, "both signatures in the header")
	require.Equal(t, 1, v1aVerifiers(t, node, rot.PublicKey, second), "the new key verifies")
	require.Equal(t, 1, v1aVerifiers(t, node, ep.PublicKey, second), "the old key verifies")

	// The endpoint page shows both public keys and the v1a snippets.
	c := signedIn(t, ts, o)
	status, page := ts.ownerDo(t, c, http.MethodGet, "/admin/webhooks/"+ep.ID.String(), "", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `<code id="endpoint-public-key" class="break">`+htmlText(rot.PublicKey)+`</code>`)
	require.Contains(t, page, `<code id="endpoint-previous-public-key" class="break">`+htmlText(ep.PublicKey)+`</code>`)
	for _, snippet := range []string{"ed25519.Verify(", "crypto.verify(null, msg, key", "Ed25519PublicKey.from_public_bytes"} {
		require.Contains(t, page, snippet)
	}
	require.NotContains(t, page, "whsk_")
}

// bodyOf sends a bodiless request and returns the answer's body,
// requiring status want.
func bodyOf(t *testing.T, ts *testServer, want int, method, path, key string) string {
	t.Helper()
	status, body := ts.do(t, method, path, key, "")
	require.Equal(t, want, status, body)
	return body
}

// htmlText is s as html/template writes it in text: base64's '+' becomes
// "&#43;".
func htmlText(s string) string { return strings.ReplaceAll(s, "+", "&#43;") }

// signedIn signs o in on a cookie client and returns it.
func signedIn(t *testing.T, ts *testServer, o testOwner) *http.Client {
	t.Helper()
	c := ownerClient(t, "127.0.0.1")
	status, body := ts.ownerDo(t, c, http.MethodPost, "/api/auth/login", `{"email":"`+o.Email+`","password":"`+o.Password+`"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	return c
}

func TestWebhookFormsSetTheFilterAndTheSigning(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	u := signIn(t, ts, o)

	status, body, _ := u.get(t, "/admin/webhooks/new")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="filter"`)
	require.Contains(t, body, `<option value="ed25519"`)

	form := func(filter string) url.Values {
		return url.Values{"url": {"https://hooks.example.com/form"}, "event_types": {"corpus.note.changed"}, "enabled": {"1"},
			"signing": {"ed25519"}, "filter": {filter}}
	}
	status, body, _ = u.post(t, "/admin/webhooks", form(`{"data.opp":"deleted"}`))
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "data.opp")
	var n int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_endpoints WHERE owner_id = $1`, o.ID).Scan(&n))
	require.Zero(t, n)

	status, _, loc := u.post(t, "/admin/webhooks", form(`{"data.op":{"$eq":"deleted"}}`))
	require.Equal(t, http.StatusSeeOther, status, "an ed25519 endpoint has no secret to show once")
	id := strings.TrimPrefix(loc, "/admin/webhooks/")
	ep := getEndpointRaw(t, ts, o.Key, id)
	require.JSONEq(t, `"ed25519"`, string(ep["signing"]))
	require.JSONEq(t, `{"data.op":{"$eq":"deleted"}}`, string(ep["filter"]))
	var public string
	require.NoError(t, json.Unmarshal(ep["public_key"], &public))
	status, body, _ = u.get(t, loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, htmlText(public))
	require.Contains(t, body, `id="endpoint-filter"><code class="break">{&#34;data.op&#34;`)

	// The edit form shows the filter, refuses a bad one and removes it when emptied.
	status, body, _ = u.get(t, loc+"/edit")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `{&#34;data.op&#34;:{&#34;$eq&#34;:&#34;deleted&#34;}}</textarea>`)
	edit := url.Values{"url": {"https://hooks.example.com/form"}, "event_types": {"corpus.note.changed"}, "enabled": {"1"},
		"max_in_flight": {"1"}, "timeout_seconds": {"10"}, "max_attempts": {"18"}}
	edit.Set("filter", `{"data.op":{"$regex":"x"}}`)
	status, body, _ = u.post(t, loc+"/edit", edit)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "$regex")
	require.JSONEq(t, `{"data.op":{"$eq":"deleted"}}`, string(getEndpointRaw(t, ts, o.Key, id)["filter"]))
	edit.Set("filter", "")
	status, body, _ = u.post(t, loc+"/edit", edit)
	require.Equal(t, http.StatusSeeOther, status, body)
	require.Equal(t, "null", string(getEndpointRaw(t, ts, o.Key, id)["filter"]))

	// Rotating from the page asks first, then shows the new key beside the old.
	status, body, _ = u.post(t, loc+"/rotate", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "ed25519 key pair")
	status, _, back := u.post(t, loc+"/rotate", url.Values{"confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, loc, back)
	status, body, _ = u.get(t, loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<code id="endpoint-previous-public-key" class="break">`+htmlText(public)+`</code>`)
}
