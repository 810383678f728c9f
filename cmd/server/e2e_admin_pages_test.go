package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInboundEditChangesHMACOptions: the source edit page changes the name,
// limits and, for the generic HMAC kind, its options; an emptied option
// goes back to its default; a bad number changes nothing.
func TestInboundEditChangesHMACOptions(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t)}
	id := fx.createAsA(t, "/api/admin/inbound-sources",
		`{"name":"hmac-src","verifier":"hmac","secret":"a provider secret of some length","options":{"signature_header":"X-Sig","signature_prefix":"sha256="}}`)
	u := signIn(t, ts, fx.A)
	status, body, _ := u.get(t, "/admin/inbound/"+id+"/edit")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `name="signature_header" value="X-Sig"`)
	require.Contains(t, body, `name="signature_prefix" value="sha256="`)

	read := func() map[string]any {
		_, b := ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+id, fx.A.Key, "")
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(b), &m))
		return m
	}
	before := read()
	status, body, _ = u.post(t, "/admin/inbound/"+id+"/edit", url.Values{"name": {"renamed"}, "tolerance_seconds": {"many"}, "signature_header": {"X-Other"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "INVALID_NUMBER")
	require.Equal(t, before, read(), "a refused form changes nothing")

	status, _, loc := u.post(t, "/admin/inbound/"+id+"/edit", url.Values{
		"name": {"renamed"}, "body_limit_bytes": {"4096"}, "tolerance_seconds": {"60"},
		"signature_header": {"X-Other"}, "signature_prefix": {""}, "encoding": {"base64"}, "payload": {"timestamp.body"}, "timestamp_header": {"X-Ts"},
	})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin/inbound/"+id+"?notice=source_saved", loc)
	after := read()
	require.Equal(t, "renamed", after["name"])
	require.EqualValues(t, 4096, after["body_limit_bytes"])
	require.EqualValues(t, 60, after["tolerance_seconds"])
	require.Equal(t, "X-Other", after["signature_header"])
	require.Equal(t, "base64", after["encoding"])
	require.Equal(t, "timestamp.body", after["payload"])
	require.Equal(t, "X-Ts", after["timestamp_header"])
	require.NotEqual(t, "sha256=", after["signature_prefix"], "the emptied prefix went back to its default")
}

// TestNoteMoveAndUpgradeRequestPages: a note moves under another and back
// to the root from its page; the account page records an upgrade request.
func TestNoteMoveAndUpgradeRequestPages(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t)}
	parent := fx.noteOfA(t, "move-parent")
	child := fx.noteOfA(t, "move-child")
	u := signIn(t, ts, fx.A)
	parentOf := func() *string {
		var got struct {
			ParentID *string `json:"parent_id"`
		}
		apiGet(t, ts, fx.A.Key, "/api/admin/notes/"+child, &got)
		return got.ParentID
	}
	status, body, _ := u.post(t, "/admin/notes/"+child+"/move", url.Values{"parent_id": {"not-an-id"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "INVALID_ID")
	require.Nil(t, parentOf())
	status, _, loc := u.post(t, "/admin/notes/"+child+"/move", url.Values{"parent_id": {parent}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin/notes/"+child+"?notice=note_moved", loc)
	require.NotNil(t, parentOf())
	require.Equal(t, parent, *parentOf())
	status, body, _ = u.get(t, "/admin/notes/"+child)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="parent_id" value="`+parent+`"`)
	status, _, _ = u.post(t, "/admin/notes/"+child+"/move", url.Values{"parent_id": {""}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Nil(t, parentOf(), "an empty parent moves the note to the root")

	status, _, loc = u.post(t, "/admin/account/upgrade", url.Values{"note": {"more gas please"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin/account?notice=upgrade_requested", loc)
	var n int
	require.NoError(t, ts.App.Pool.QueryRow(t.Context(),
		`SELECT count(*) FROM events WHERE owner_id = $1 AND type = 'instance.upgrade_requested'`, fx.A.ID).Scan(&n))
	require.Equal(t, 1, n)

	status, body, _ = u.get(t, "/admin/static/no-such-file.css")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "<!doctype html>", "a missing asset is an HTML 404 too")
}
