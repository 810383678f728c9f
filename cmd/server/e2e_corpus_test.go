package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// jsonOf decodes a response body into a map.
func jsonOf(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

// mustDo sends a request and requires the status.
func (ts *testServer) mustDo(t *testing.T, want int, method, path, key, body string) map[string]any {
	t.Helper()
	status, resp := ts.do(t, method, path, key, body)
	require.Equal(t, want, status, "%s %s: %s", method, path, resp)
	if resp == "" {
		return nil
	}
	return jsonOf(t, resp)
}

// postRaw sends a body of any content type.
func (ts *testServer) postRaw(t *testing.T, path, key, contentType string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// waitIndexed waits until every corpus.note.changed event of owner has been
// fanned out by the relay and its corpus.index job has completed in River:
// the index then reflects every committed change. It waits on that state,
// polling, and fails only if it never comes.
func (ts *testServer) waitIndexed(t *testing.T, owner uuid.UUID) {
	t.Helper()
	const q = `SELECT count(*) FILTER (WHERE fanned_out_at IS NULL), coalesce(array_agg(id), '{}')
FROM events WHERE owner_id = $1 AND type = $2`
	deadline := time.Now().Add(30 * time.Second)
	for {
		var unfanned, pending int
		var ids []uuid.UUID
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(), q, owner, domain.EventCorpusNoteChanged).Scan(&unfanned, &ids))
		for _, j := range listJobs(t, ts, jobsOfKind(corpus.IndexSubscriberName), forEvents(ids...)) {
			if j.State != rivertype.JobStateCompleted {
				pending++
			}
		}
		if unfanned == 0 && pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("index never settled: %d events not fanned out, %d corpus.index jobs not completed", unfanned, pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// publicSearch returns the URIs of the public search hits.
func (ts *testServer) publicSearch(t *testing.T, query string) []string {
	t.Helper()
	body := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/search?"+query, "", "")
	var uris []string
	for _, h := range body["data"].([]any) {
		uris = append(uris, h.(map[string]any)["uri"].(string))
	}
	return uris
}

func ownerEventTypes(t *testing.T, ts *testServer, owner uuid.UUID) []string {
	t.Helper()
	rows, err := ts.App.Pool.Query(context.Background(), `SELECT type FROM events WHERE owner_id = $1 ORDER BY seq`, owner)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	return out
}

func countOf(types []string, typ string) int {
	n := 0
	for _, x := range types {
		if x == typ {
			n++
		}
	}
	return n
}

// TestCorpusEndToEnd drives notes, the trigger, the relay, River and the
// index through the real server: create → searchable, rename and move →
// subtree paths follow, unpublish → gone, and the vault import in both
// encodings at one path.
func TestCorpusEndToEnd(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, key := ts.newOwner(t)

	zoo := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", key, `{"genre":"wiki","title":"Zoo"}`)
	require.Equal(t, "wiki://zoo", zoo["uri"])
	zooID := zoo["id"].(string)
	okapi := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", key,
		`{"genre":"wiki","title":"Okapi!","parent_id":"`+zooID+`","body":"A forest giraffe.","published":true,"lang":"en","tags":["mammal"]}`)
	require.Equal(t, "wiki://zoo/okapi", okapi["uri"])
	okapiID := okapi["id"].(string)
	ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", key, `{"genre":"raw","title":"okapi sighting","body":"okapi"}`)
	essay := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", key, `{"genre":"writing","title":"Okapi essay","slug":"okapis"}`)
	require.Equal(t, "writing://okapis", essay["uri"])

	got := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/notes/"+okapiID, key, "")
	require.Equal(t, "wiki://zoo/okapi", got["uri"])
	require.Equal(t, []any{"mammal"}, got["tags"])
	status, body := ts.do(t, http.MethodPost, "/api/admin/notes", key, `{"genre":"raw","title":"x","published":true}`)
	require.Equal(t, http.StatusUnprocessableEntity, status, body)
	require.Equal(t, "RAW_NOT_PUBLISHABLE", jsonOf(t, body)["error"].(map[string]any)["code"])
	status, body = ts.do(t, http.MethodPost, "/api/admin/notes/"+zooID+"/move", key, `{"parent_id":"`+okapiID+`"}`)
	require.Equal(t, http.StatusUnprocessableEntity, status, body)
	require.Contains(t, body, "MOVE_CYCLE")

	ts.waitIndexed(t, owner)
	require.ElementsMatch(t, []string{"wiki://zoo/okapi"}, ts.publicSearch(t, "q=okapi"), "published and not raw, drafts hidden")
	require.ElementsMatch(t, []string{"wiki://zoo/okapi"}, ts.publicSearch(t, "q=giraffes"), "English stemming")
	admin := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/search?q=okapi", key, "")
	require.Len(t, admin["data"], 3, "admin search sees the draft and the raw note too")

	// Rename the parent: the published child's path follows.
	ts.mustDo(t, http.StatusOK, http.MethodPatch, "/api/admin/notes/"+zooID, key, `{"title":"Park"}`)
	ts.waitIndexed(t, owner)
	require.ElementsMatch(t, []string{"wiki://park/okapi"}, ts.publicSearch(t, "q=okapi"))

	// Move it under another parent.
	forest := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", key, `{"genre":"wiki","title":"Forest"}`)
	moved := ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/notes/"+okapiID+"/move", key, `{"parent_id":"`+forest["id"].(string)+`"}`)
	require.Equal(t, "wiki://forest/okapi", moved["uri"])
	ts.waitIndexed(t, owner)
	require.ElementsMatch(t, []string{"wiki://forest/okapi"}, ts.publicSearch(t, "q=okapi"))

	// Publish the writing: writing.published; unpublish the okapi: gone.
	ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/notes/"+essay["id"].(string)+"/publish", key, "")
	ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/notes/"+okapiID+"/unpublish", key, "")
	ts.waitIndexed(t, owner)
	require.ElementsMatch(t, []string{"writing://okapis"}, ts.publicSearch(t, "q=okapi"))

	// Delete refuses a parent, then removes it recursively.
	status, body = ts.do(t, http.MethodDelete, "/api/admin/notes/"+forest["id"].(string), key, "")
	require.Equal(t, http.StatusConflict, status, body)
	status, _ = ts.do(t, http.MethodDelete, "/api/admin/notes/"+forest["id"].(string)+"?recursive=true", key, "")
	require.Equal(t, http.StatusNoContent, status)
	ts.mustDo(t, http.StatusNotFound, http.MethodGet, "/api/admin/notes/"+okapiID, key, "")

	// Paged list.
	page := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/notes?limit=2", key, "")
	require.Len(t, page["data"], 2)
	require.NotNil(t, page["next_cursor"])
	rest := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/notes?limit=2&cursor="+url.QueryEscape(page["next_cursor"].(string)), key, "")
	require.Len(t, rest["data"], 1)
	require.Nil(t, rest["next_cursor"])

	// The vault import: JSON and zip at the same path, one vault.imported each.
	imported := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/vault/import", key,
		`{"notes":[{"ref":"sw","genre":"wiki","title":"Software"},{"parent_ref":"sw","genre":"wiki","title":"StandMeet","published":true,"body":"event bus"}]}`)
	require.EqualValues(t, 2, imported["imported"])
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for name, text := range map[string]string{
		"projects/index.md":      "---\ntitle: Projects\n---\n",
		"projects/standmeet.md":  "---\ntags: [go]\npublished: true\n---\nThe webhook platform.",
		".obsidian/workspace.md": "ignored",
	} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(text))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	status, body = ts.postRaw(t, "/api/admin/vault/import?genre=wiki", key, "application/zip", zipped.Bytes())
	require.Equal(t, http.StatusCreated, status, body)
	var zres struct {
		Imported int `json:"imported"`
		Notes    []struct{ Ref, URI string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &zres))
	require.Equal(t, 2, zres.Imported)
	uris := map[string]string{}
	for _, n := range zres.Notes {
		uris[n.Ref] = n.URI
	}
	require.Equal(t, map[string]string{"projects": "wiki://projects", "projects/standmeet": "wiki://projects/standmeet"}, uris)
	status, body = ts.postRaw(t, "/api/admin/vault/import", key, "text/plain", []byte("x"))
	require.Equal(t, http.StatusUnsupportedMediaType, status, body)
	ts.waitIndexed(t, owner)
	require.ElementsMatch(t, []string{"wiki://software/standmeet", "wiki://projects/standmeet"}, ts.publicSearch(t, "q=standmeet"))

	types := ownerEventTypes(t, ts, owner)
	require.Equal(t, 1, countOf(types, domain.EventWritingPublished))
	require.Equal(t, 2, countOf(types, domain.EventVaultImported))
	require.Positive(t, countOf(types, domain.EventCorpusNoteChanged))
}

// TestAccessEndToEnd: roles, codes (shown once, redeemed publicly, revoked),
// embeds checked by the webhook ops through the root's EmbedBelongsTo,
// access requests from the public route to approval, and the owner rule of
// the public routes.
func TestAccessEndToEnd(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, key := ts.newOwner(t)

	role := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/roles", key, `{"name":"friends","uri_globs":["wiki://*"],"published_only":true}`)
	roleID := role["id"].(string)
	issued := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/codes", key, `{"role_id":"`+roleID+`","label":"Ann","deny_globs":["wiki://private/*"]}`)
	value := issued["code"].(string)
	require.True(t, strings.HasPrefix(value, "smac_"))
	codeID := issued["id"].(string)
	got := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/codes/"+codeID, key, "")
	_, shown := got["code"]
	require.False(t, shown, "the value is shown once")
	list := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/codes", key, "")
	require.NotContains(t, mustJSON(t, list), value)

	redeemed := ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/access/redeem", "", `{"code":"`+value+`"}`)
	require.Equal(t, "friends", redeemed["role"])
	ts.mustDo(t, http.StatusUnauthorized, http.MethodPost, "/api/access/redeem", "", `{"code":"smac_wrong"}`)

	embed := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/embeds", key, `{"code_id":"`+codeID+`","name":"blog"}`)
	embedID := embed["id"].(string)
	// The webhook ops accept the owner's embed (EmbedBelongsTo at the root)
	// and refuse an unknown one. The endpoint is disabled: nothing is sent.
	ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/webhooks", key,
		`{"url":"https://receiver.example/hook","event_types":["corpus.note.changed"],"embed_id":"`+embedID+`","enabled":false}`)
	status, body := ts.do(t, http.MethodPost, "/api/admin/webhooks", key,
		`{"url":"https://receiver.example/hook","event_types":["corpus.note.changed"],"embed_id":"`+uuid.NewString()+`","enabled":false}`)
	require.GreaterOrEqual(t, status, 400, body)

	revoked := ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/codes/"+codeID+"/revoke", key, "")
	require.Equal(t, "revoked", revoked["status"])
	ts.mustDo(t, http.StatusUnauthorized, http.MethodPost, "/api/access/redeem", "", `{"code":"`+value+`"}`)
	status, body = ts.do(t, http.MethodDelete, "/api/admin/roles/"+roleID, key, "")
	require.Equal(t, http.StatusConflict, status, body)
	ts.mustDo(t, http.StatusNoContent, http.MethodDelete, "/api/admin/embeds/"+embedID, key, "")

	// A visitor asks; the owner approves, which issues a working code.
	req := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/access-requests", "", `{"name":"Bo","email":"bo@example.com","message":"hi"}`)
	reqID := req["id"].(string)
	pending := ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/admin/access-requests?status=pending", key, "")
	require.Contains(t, mustJSON(t, pending), "bo@example.com")
	approved := ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/admin/access-requests/"+reqID+"/approve", key, `{"role_id":"`+roleID+`"}`)
	require.Equal(t, "approved", approved["request"].(map[string]any)["status"])
	newValue := approved["code"].(map[string]any)["code"].(string)
	ts.mustDo(t, http.StatusOK, http.MethodPost, "/api/access/redeem", "", `{"code":"`+newValue+`"}`)
	status, _ = ts.do(t, http.MethodPost, "/api/admin/access-requests/"+reqID+"/reject", key, "")
	require.Equal(t, http.StatusConflict, status)
	// The public route is rate-limited per client address (3 an hour).
	ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/access-requests", "", `{"name":"Bo","email":"bo@example.com"}`)
	ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/access-requests", "", `{"name":"Bo","email":"bo@example.com"}`)
	ts.mustDo(t, http.StatusTooManyRequests, http.MethodPost, "/api/access-requests", "", `{"name":"Bo","email":"bo@example.com"}`)

	types := ownerEventTypes(t, ts, owner)
	for typ, want := range map[string]int{
		domain.EventCodeIssued: 2, domain.EventCodeRevoked: 1, domain.EventCodeRedeemed: 2,
		domain.EventAccessRequestCreated: 3, domain.EventAccessRequestApproved: 1, domain.EventAccessRequestStatusChanged: 1,
	} {
		require.Equal(t, want, countOf(types, typ), typ)
	}

	// One owner: public routes need no ?owner=. Two: they must name one.
	ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/search?q=x", "", "")
	other, _ := ts.newOwner(t)
	status, body = ts.do(t, http.MethodGet, "/api/search?q=x", "", "")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "OWNER_REQUIRED")
	ts.mustDo(t, http.StatusOK, http.MethodGet, "/api/search?q=x&owner="+other.String(), "", "")
	ts.mustDo(t, http.StatusNotFound, http.MethodGet, "/api/search?q=x&owner="+uuid.NewString(), "", "")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// --- owner isolation rows of the corpus and access routes --------------

// noteOfA creates a note of A's over the API and returns its id.
func (fx *isolationFixture) noteOfA(t *testing.T, title string) string {
	t.Helper()
	n := fx.ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", fx.A.Key, `{"genre":"wiki","title":"`+title+`","body":"isolation"}`)
	return n["id"].(string)
}

func (fx *isolationFixture) roleOfA(t *testing.T) (id, name string) {
	t.Helper()
	name = "a-role-" + uuid.NewString()[:8]
	r := fx.ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/roles", fx.A.Key, `{"name":"`+name+`","uri_globs":["wiki://*"]}`)
	return r["id"].(string), name
}

func (fx *isolationFixture) codeOfA(t *testing.T) string {
	t.Helper()
	roleID, _ := fx.roleOfA(t)
	c := fx.ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/codes", fx.A.Key, `{"role_id":"`+roleID+`"}`)
	return c["id"].(string)
}

func (fx *isolationFixture) embedOfA(t *testing.T) string {
	t.Helper()
	e := fx.ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/embeds", fx.A.Key, `{"code_id":"`+fx.codeOfA(t)+`","name":"a-embed"}`)
	return e["id"].(string)
}

// requestOfA stores an access request of A's directly (the public route's
// rate limit is not what this test is about).
func (fx *isolationFixture) requestOfA(t *testing.T) (id, email string) {
	t.Helper()
	rid := uuid.Must(uuid.NewV7())
	email = "visitor-" + rid.String()[:8] + "@example.test"
	_, err := fx.ts.App.Pool.Exec(context.Background(), `INSERT INTO access_requests (id, owner_id, name, email, status, client_key, created_at, updated_at)
VALUES ($1, $2, 'Visitor', $3, 'pending', 'isolation', now(), now())`, rid, fx.A.ID, email)
	require.NoError(t, err)
	return rid.String(), email
}

// noteSurvives checks A's note still has its title.
func noteSurvives(title string) func(t *testing.T, fx *isolationFixture, target isolationTarget) {
	return func(t *testing.T, fx *isolationFixture, target isolationTarget) {
		n := fx.ts.mustDo(t, http.StatusOK, http.MethodGet, noteBase(target.Path), fx.A.Key, "")
		require.Equal(t, title, n["title"])
	}
}

// noteBase cuts /publish, /move, … off a note path.
func noteBase(p string) string {
	parts := strings.Split(p, "/")
	return strings.Join(parts[:5], "/")
}

func corpusIsolationRows() map[string]isolationRow {
	notePath := func(suffix string) func(t *testing.T, fx *isolationFixture) isolationTarget {
		return func(t *testing.T, fx *isolationFixture) isolationTarget {
			return isolationTarget{Path: "/api/admin/notes/" + fx.noteOfA(t, "a-note") + suffix}
		}
	}
	return map[string]isolationRow{
		"GET /api/admin/notes": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id := fx.noteOfA(t, "a-listed-note")
				return isolationTarget{Path: "/api/admin/notes", Hidden: []string{id, "a-listed-note"}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/notes": {
			// Not row-scoped, but A's note cannot be B's parent.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/notes", Body: `{"genre":"wiki","title":"b-probe","parent_id":"` + fx.noteOfA(t, "a-parent") + `"}`}
			},
			WantB: http.StatusUnprocessableEntity,
			After: createdForB("corpus_notes", "title", "b-probe", 0),
		},
		"GET /api/admin/notes/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/notes/" + fx.noteOfA(t, "a-secret-title"), Hidden: []string{"a-secret-title"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"PATCH /api/admin/notes/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/notes/" + fx.noteOfA(t, "a-note"), Body: `{"title":"taken over"}`}
			},
			WantB: http.StatusNotFound, After: noteSurvives("a-note"), WantA: http.StatusOK,
		},
		"DELETE /api/admin/notes/:id": {
			Target: notePath(""), WantB: http.StatusNotFound, After: noteSurvives("a-note"), WantA: http.StatusNoContent,
		},
		"POST /api/admin/notes/:id/publish": {
			Target: notePath("/publish"), WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/notes/:id/unpublish": {
			Target: notePath("/unpublish"), WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/notes/:id/move": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/notes/" + fx.noteOfA(t, "a-note") + "/move", Body: `{"parent_id":null}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/vault/import": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/vault/import",
					Body: `{"parent_id":"` + fx.noteOfA(t, "a-vault-root") + `","notes":[{"genre":"wiki","title":"b-probe"}]}`}
			},
			WantB: http.StatusUnprocessableEntity, WantA: http.StatusCreated,
		},
		"GET /api/admin/search": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				fx.noteOfA(t, "quagga")
				return isolationTarget{Path: "/api/admin/search?q=quagga", Hidden: []string{"quagga"}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
	}
}

func accessIsolationRows() map[string]isolationRow {
	return map[string]isolationRow{
		"GET /api/admin/roles": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, name := fx.roleOfA(t)
				return isolationTarget{Path: "/api/admin/roles", Hidden: []string{id, name}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/roles": {
			Target: func(*testing.T, *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/roles", Body: `{"name":"b-role","uri_globs":["*"]}`}
			},
			WantB: http.StatusCreated,
			After: createdForB("access_roles", "name", "b-role", 1),
		},
		"PATCH /api/admin/roles/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.roleOfA(t)
				return isolationTarget{Path: "/api/admin/roles/" + id, Body: `{"uri_globs":["*"]}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"DELETE /api/admin/roles/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.roleOfA(t)
				return isolationTarget{Path: "/api/admin/roles/" + id}
			},
			WantB: http.StatusNotFound, WantA: http.StatusNoContent,
		},
		"GET /api/admin/codes": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/codes", Hidden: []string{fx.codeOfA(t)}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/codes": {
			// B cannot issue a code under A's role.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.roleOfA(t)
				return isolationTarget{Path: "/api/admin/codes", Body: `{"role_id":"` + id + `"}`}
			},
			WantB: http.StatusUnprocessableEntity, WantA: http.StatusCreated,
		},
		"GET /api/admin/codes/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/codes/" + fx.codeOfA(t)}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/codes/:id/revoke": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/codes/" + fx.codeOfA(t) + "/revoke"}
			},
			WantB: http.StatusNotFound,
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				c := fx.ts.mustDo(t, http.StatusOK, http.MethodGet, strings.TrimSuffix(target.Path, "/revoke"), fx.A.Key, "")
				require.Equal(t, "active", c["status"])
			},
			WantA: http.StatusOK,
		},
		"POST /api/admin/codes/:id/check": {
			// B cannot learn what A's code admits.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/codes/" + fx.codeOfA(t) + "/check", Body: `{"uri":"wiki://a","published":true}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/embeds": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/embeds", Hidden: []string{fx.embedOfA(t)}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/embeds": {
			// B cannot expose A's code.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/embeds", Body: `{"code_id":"` + fx.codeOfA(t) + `","name":"b-embed"}`}
			},
			WantB: http.StatusUnprocessableEntity, WantA: http.StatusCreated,
		},
		"DELETE /api/admin/embeds/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/embeds/" + fx.embedOfA(t)}
			},
			WantB: http.StatusNotFound, WantA: http.StatusNoContent,
		},
		"GET /api/admin/access-requests": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, email := fx.requestOfA(t)
				return isolationTarget{Path: "/api/admin/access-requests", Hidden: []string{id, email}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/access-requests/:id/approve": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.requestOfA(t)
				roleID, _ := fx.roleOfA(t)
				return isolationTarget{Path: "/api/admin/access-requests/" + id + "/approve", Body: `{"role_id":"` + roleID + `"}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/access-requests/:id/reject": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.requestOfA(t)
				return isolationTarget{Path: "/api/admin/access-requests/" + id + "/reject"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
	}
}
