package main

// Scope through the whole path: raw never leaves, a standalone
// endpoint gets the published slice (an unpublish included), an embed
// endpoint gets what its code admits, asked on every event.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// noteEvent is a corpus.note.changed event as stored.
type noteEvent struct {
	ID      uuid.UUID
	Subject string
	Data    map[string]any
}

// noteEventsOf returns the owner's corpus.note.changed events about note
// noteID, oldest first.
func noteEventsOf(t *testing.T, ts *testServer, noteID string) []noteEvent {
	t.Helper()
	rows, err := ts.App.Pool.Query(context.Background(), `SELECT id, subject, data FROM events
WHERE type = 'corpus.note.changed' AND data->>'note_id' = $1 ORDER BY seq`, noteID)
	require.NoError(t, err)
	defer rows.Close()
	var out []noteEvent
	for rows.Next() {
		var (
			e   noteEvent
			raw []byte
		)
		require.NoError(t, rows.Scan(&e.ID, &e.Subject, &raw))
		require.NoError(t, json.Unmarshal(raw, &e.Data))
		out = append(out, e)
	}
	require.NoError(t, rows.Err())
	return out
}

// waitFannedOut waits until the webhook.fanout job of every event has
// completed: from then on the deliveries it queued (or did not) are known.
func waitFannedOut(t *testing.T, ts *testServer, eventIDs ...uuid.UUID) {
	t.Helper()
	require.Eventually(t, func() bool {
		return len(listJobs(t, ts, jobsOfKind(delivery.KindFanout, rivertype.JobStateCompleted), forEvents(eventIDs...))) == len(eventIDs)
	}, 60*time.Second, 20*time.Millisecond, "fan-out of %d events never completed", len(eventIDs))
}

// queuedFor returns the event ids the endpoint has delivery jobs for.
func queuedFor(t *testing.T, ts *testServer, endpointID uuid.UUID) map[uuid.UUID]bool {
	t.Helper()
	out := map[uuid.UUID]bool{}
	for _, j := range listJobs(t, ts, jobsOfKind(delivery.KindDeliver), forEndpoint(endpointID)) {
		var ref jobRef
		require.NoError(t, json.Unmarshal(j.EncodedArgs, &ref))
		out[ref.EventID] = true
	}
	return out
}

func createNote(t *testing.T, ts *testServer, key, genre, title string, published bool) (id, uri string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"genre": genre, "title": title, "body": "text", "published": published})
	n := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", key, string(b))
	return n["id"].(string), n["uri"].(string)
}

func TestWebhookScopeRawNeverLeavesAndUnpublishIsHeard(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"corpus.*"}})

	rawID, rawURI := createNote(t, ts, key, "raw", "Diary", false)
	ts.mustDo(t, http.StatusOK, http.MethodPatch, "/api/admin/notes/"+rawID, key, `{"title":"Diary, edited"}`)
	// A published note turned raw: its event was published a moment ago
	// (was_published), which would reach a standalone endpoint, but its
	// URI is raw:// now, and raw never leaves.
	movedID, _ := createNote(t, ts, key, "wiki", "Moved to raw", true)
	moved := ts.mustDo(t, http.StatusOK, http.MethodPatch, "/api/admin/notes/"+movedID, key, `{"genre":"raw","published":false}`)
	require.True(t, strings.HasPrefix(moved["uri"].(string), "raw://"), moved["uri"])
	draftID, _ := createNote(t, ts, key, "wiki", "Draft", false)
	pubID, pubURI := createNote(t, ts, key, "wiki", "Published", true)
	ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/notes/"+pubID+"/unpublish", key, "")

	raw, draft, pub := noteEventsOf(t, ts, rawID), noteEventsOf(t, ts, draftID), noteEventsOf(t, ts, pubID)
	movedEvs := noteEventsOf(t, ts, movedID)
	require.Len(t, movedEvs, 2)
	require.Equal(t, true, movedEvs[1].Data["was_published"])
	require.True(t, strings.HasPrefix(movedEvs[1].Subject, "raw://"))
	require.Len(t, raw, 2)
	require.Len(t, draft, 1)
	require.Len(t, pub, 2)
	var all []uuid.UUID
	for _, evs := range [][]noteEvent{raw, draft, pub, movedEvs} {
		for _, e := range evs {
			all = append(all, e.ID)
		}
	}
	waitFannedOut(t, ts, all...)
	queued := queuedFor(t, ts, ep.ID)
	for _, e := range raw {
		require.False(t, queued[e.ID], "raw never leaves: %s", rawURI)
	}
	require.False(t, queued[movedEvs[1].ID], "raw never leaves, even when it was published a moment ago")
	require.True(t, queued[movedEvs[0].ID], "the note was delivered while it was a published wiki note")
	require.False(t, queued[draft[0].ID], "a draft that was never published is not in the published slice")
	require.True(t, queued[pub[0].ID], "the publish is delivered")
	require.True(t, queued[pub[1].ID], "the unpublish is heard")
	require.Len(t, queued, 3)

	waitDelivery(t, ts, key, ep.ID, pub[1].ID, "completed")
	waitDelivery(t, ts, key, ep.ID, pub[0].ID, "completed")
	got := map[string]thinBody{}
	for _, r := range rc.requests() {
		_, err := verifySW(ep.Secret, r.Header, r.Body, time.Now())
		require.NoError(t, err)
		var b thinBody
		require.NoError(t, json.Unmarshal(r.Body, &b))
		got[b.ID] = b
	}
	unpub := got[pub[1].ID.String()]
	require.Equal(t, pubURI, unpub.Subject)
	var data map[string]any
	require.NoError(t, json.Unmarshal(unpub.Data, &data))
	require.Equal(t, false, data["published"])
	require.Equal(t, true, data["was_published"])
	require.NotContains(t, string(unpub.Data), "text", "thin: no body")
}

func TestWebhookEmbedEndpointStopsTheMomentItsCodeIsRevoked(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	role := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/roles", key,
		`{"name":"readers","uri_globs":["wiki://*"],"published_only":true}`)
	code := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/codes", key,
		`{"role_id":"`+role["id"].(string)+`","label":"partner"}`)
	embed := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/embeds", key,
		`{"code_id":"`+code["id"].(string)+`","name":"partner site"}`)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"corpus.*"}, "embed_id": embed["id"]})
	require.NotEqual(t, uuid.Nil, ep.ID)

	// Admitted while the code is live.
	before, _ := createNote(t, ts, key, "wiki", "Before", true)
	beforeEv := noteEventsOf(t, ts, before)[0].ID
	waitDelivery(t, ts, key, ep.ID, beforeEv, "completed")

	// A delivery queued before the revocation (held by the cooldown) ...
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '1 minute', failed_at = now() WHERE id = $1`, ep.ID)
	queuedNote, _ := createNote(t, ts, key, "wiki", "Queued", true)
	queuedEv := noteEventsOf(t, ts, queuedNote)[0].ID
	held := waitDelivery(t, ts, key, ep.ID, queuedEv, "scheduled")
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1`, ep.ID)

	ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/codes/"+code["id"].(string)+"/revoke", key, "")

	// ... is discarded when it runs, and nothing new is queued.
	_, err := ts.App.Worker.JobRetry(context.Background(), held.JobID)
	require.NoError(t, err)
	d := waitDelivery(t, ts, key, ep.ID, queuedEv, "cancelled", "discarded")
	got := attemptsOf(t, ts, d.JobID)
	require.Len(t, got, 1)
	require.Contains(t, *got[0].Error, "out of the endpoint's scope")

	after, _ := createNote(t, ts, key, "wiki", "After", true)
	afterEv := noteEventsOf(t, ts, after)[0].ID
	waitFannedOut(t, ts, afterEv)
	require.False(t, queuedFor(t, ts, ep.ID)[afterEv], "a revoked code admits nothing")
	require.Equal(t, 1, rc.count(), "only the note admitted before the revocation was received")
}

func TestWebhookCreateRefusesAnotherOwnersEmbed(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, keyA := webhookOwner(t, ts)
	_, keyB := webhookOwner(t, ts)
	role := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/roles", keyA, `{"name":"r","uri_globs":["wiki://*"]}`)
	code := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/codes", keyA, `{"role_id":"`+role["id"].(string)+`"}`)
	embed := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/embeds", keyA, `{"code_id":"`+code["id"].(string)+`","name":"e"}`)
	for _, id := range []string{embed["id"].(string), uuid.NewString()} {
		status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks", keyB,
			`{"url":"https://example.com/h","event_types":["*"],"embed_id":"`+id+`"}`)
		require.Equal(t, http.StatusBadRequest, status, resp)
		require.Contains(t, resp, "UNKNOWN_EMBED")
	}
	status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks", keyA,
		`{"url":"https://example.com/h","event_types":["*"],"embed_id":"`+embed["id"].(string)+`"}`)
	require.Equal(t, http.StatusCreated, status, resp)
}
