package main

// The owner-isolation table of the admin UI: every route under /admin,
// called with owner B's browser session against owner A's rows. The
// /api/admin table (e2e_owner_test.go) covers the ops; this one covers the
// pages and forms that call them, so a page that looked a row up by id
// without the caller, or showed another owner's list, fails here.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// uiClient is a browser-like client signed in to the admin UI.
type uiClient struct {
	ts   *testServer
	c    *http.Client
	csrf string
}

var uiCSRF = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signIn signs in through the admin's sign-in form, as a browser does.
func signIn(t *testing.T, ts *testServer, o testOwner) *uiClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	u := &uiClient{ts: ts, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	status, body, _ := u.get(t, "/admin/login")
	require.Equal(t, http.StatusOK, status, body)
	m := uiCSRF.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	status, body, _ = u.post(t, "/admin/login", url.Values{"csrf_token": {m[1]}, "email": {o.Email}, "password": {o.Password}})
	require.Equal(t, http.StatusSeeOther, status, body)
	status, body, _ = u.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, status, body)
	m = uiCSRF.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	u.csrf = m[1]
	return u
}

func (u *uiClient) get(t *testing.T, path string) (int, string, string) {
	t.Helper()
	resp, err := u.c.Get(u.ts.URL + path)
	require.NoError(t, err)
	return readUI(t, resp)
}

// post sends a form with the session's CSRF token added.
func (u *uiClient) post(t *testing.T, path string, form url.Values) (int, string, string) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if u.csrf != "" && form.Get("csrf_token") == "" {
		form.Set("csrf_token", u.csrf)
	}
	resp, err := u.c.PostForm(u.ts.URL+path, form)
	require.NoError(t, err)
	return readUI(t, resp)
}

func readUI(t *testing.T, resp *http.Response) (int, string, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

// uiTarget is one request of the UI isolation test.
type uiTarget struct {
	// Path is the concrete path, A's ids filled in.
	Path string
	// Form is posted (POST routes); confirm=yes is added to every post so
	// confirmation steps are passed and the action itself is tried.
	Form url.Values
	// Hidden are strings of A's that B's answer must not contain.
	Hidden []string
}

// uiRow says how owner B's session calls one /admin route against A's data.
type uiRow struct {
	Target func(t *testing.T, fx *isolationFixture) uiTarget
	// WantB is B's status: 404 on A's rows, 2xx/3xx on B's own pages.
	WantB int
	// After, when set, checks that A's data survived B's request.
	After func(t *testing.T, fx *isolationFixture, target uiTarget)
}

// uiNotIsolatedHere are /admin routes this table leaves to others, with why.
var uiNotIsolatedHere = map[string]string{
	"/admin/tasks":   "River's own UI: its access rule (operator only) is tested with its mount",
	"/admin/tasks/*": "River's own UI: its access rule (operator only) is tested with its mount",
}

// adminUIRoutes returns "METHOD path" of every route the server registered
// under /admin, but those uiNotIsolatedHere leaves to others.
func adminUIRoutes(ts *testServer) []string {
	return routesUnder(ts, "/admin", uiNotIsolatedHere)
}

// TestOwnerIsolationOnEveryAdminPage: for every /admin route, owner B's
// signed-in browser never sees or changes owner A's rows. A route without a
// row fails the test.
func TestOwnerIsolationOnEveryAdminPage(t *testing.T) {
	t.Parallel()
	// The webhook rows register loopback discard-port endpoints, which
	// registration refuses unless the policy allows them.
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.1/32"}})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t), B: ts.newOwnerAccount(t)}
	rows := adminUIIsolationRows()
	for k, v := range accessUIIsolationRows() {
		rows[k] = v
	}
	routes := adminUIRoutes(ts)
	require.NotEmpty(t, routes)
	for k := range rows {
		require.Contains(t, routes, k, "stale UI isolation row: the route no longer exists")
	}
	for _, key := range routes {
		row, ok := rows[key]
		method := strings.Fields(key)[0]
		t.Run(key, func(t *testing.T) {
			require.True(t, ok, "no row for %s in the admin UI isolation table (cmd/server/e2e_admin_isolation_test.go)", key)
			target := row.Target(t, fx)
			// A fresh session per row: some rows end B's sessions.
			b := signIn(t, ts, fx.B)
			var status int
			var body string
			if method == http.MethodPost {
				form := url.Values{}
				for k, v := range target.Form {
					form[k] = v
				}
				form.Set("confirm", "yes")
				status, body, _ = b.post(t, target.Path, form)
			} else {
				status, body, _ = b.get(t, target.Path)
			}
			require.Equal(t, row.WantB, status, "owner B on %s: %s", target.Path, body)
			for _, h := range target.Hidden {
				require.NotContains(t, body, h, "owner B sees A's data")
			}
			if row.After != nil {
				row.After(t, fx, target)
			}
		})
	}
}

// noteOfAUnchanged requires that A's note still exists, unpublished and
// with its title.
func noteOfAUnchanged(title string) func(t *testing.T, fx *isolationFixture, target uiTarget) {
	return func(t *testing.T, fx *isolationFixture, target uiTarget) {
		id := strings.Split(strings.TrimPrefix(target.Path, "/admin/notes/"), "/")[0]
		var got struct {
			Title     string `json:"title"`
			Published bool   `json:"published"`
		}
		apiGet(t, fx.ts, fx.A.Key, "/api/admin/notes/"+id, &got)
		require.Equal(t, title, got.Title)
		require.False(t, got.Published)
	}
}

// sourceOfAUnchanged requires that A's source still exists, enabled, with
// its name.
func sourceOfAUnchanged(t *testing.T, fx *isolationFixture, target uiTarget) {
	t.Helper()
	id := strings.Split(strings.TrimPrefix(target.Path, "/admin/inbound/"), "/")[0]
	var got struct {
		Name            string  `json:"name"`
		Enabled         bool    `json:"enabled"`
		SecretRotatedAt *string `json:"secret_rotated_at"`
	}
	apiGet(t, fx.ts, fx.A.Key, "/api/admin/inbound-sources/"+id, &got)
	require.Equal(t, "a-source", got.Name)
	require.True(t, got.Enabled)
	require.Nil(t, got.SecretRotatedAt, "B rotated A's source secret")
}

// deadLetterOfAStillDead requires that A's dead letter was not replayed.
func deadLetterOfAStillDead(t *testing.T, fx *isolationFixture, target uiTarget) {
	t.Helper()
	src := strings.Split(strings.TrimPrefix(target.Path, "/admin/inbound/"), "/")[0]
	var n int
	require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM inbound_messages WHERE source_id = $1 AND state = 'dead'`, src).Scan(&n))
	require.Equal(t, 1, n, "B replayed A's dead letter")
}

func adminUIIsolationRows() map[string]uiRow {
	page := func(wantB int, path string) uiRow {
		return uiRow{Target: func(*testing.T, *isolationFixture) uiTarget { return uiTarget{Path: path} }, WantB: wantB}
	}
	endpoint := func(suffix string) func(t *testing.T, fx *isolationFixture) uiTarget {
		return func(t *testing.T, fx *isolationFixture) uiTarget {
			id := fx.endpointOfA(t)
			return uiTarget{Path: "/admin/webhooks/" + id + suffix, Hidden: []string{"a-endpoint"}}
		}
	}
	endpointUnchanged := func(t *testing.T, fx *isolationFixture, target uiTarget) {
		now := fx.endpointStateOfA(t, strings.Split(strings.TrimPrefix(target.Path, "/admin/webhooks/"), "/")[0])
		require.Equal(t, "a-endpoint", now["description"])
		require.Equal(t, true, now["enabled"])
		require.Nil(t, now["filter"])
	}
	// delivery is one of A's attempted deliveries, its job snapshotted so
	// deliveryUnchanged can tell B moved nothing.
	deliveryTarget := func(suffix string) func(t *testing.T, fx *isolationFixture) uiTarget {
		return func(t *testing.T, fx *isolationFixture) uiTarget {
			id, job, event := fx.deliveryOfA(t)
			return uiTarget{Path: "/admin/webhooks/" + id + "/deliveries/" + job + suffix, Hidden: []string{event}}
		}
	}
	deliveryUnchanged := func(t *testing.T, fx *isolationFixture, target uiTarget) {
		endpointUnchanged(t, fx, target)
		parts := strings.Split(target.Path, "/")
		job := parts[len(parts)-2]
		before, ok := jobSnapshots.Load(job)
		require.True(t, ok)
		require.Equal(t, before, jobSnapshot(t, fx, job), "B moved A's delivery")
	}
	source := func(suffix string) func(t *testing.T, fx *isolationFixture) uiTarget {
		return func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/inbound/" + fx.sourceOfA(t) + suffix, Hidden: []string{"a-source"}}
		}
	}
	deadLetter := func(suffix string) func(t *testing.T, fx *isolationFixture) uiTarget {
		return func(t *testing.T, fx *isolationFixture) uiTarget {
			src := fx.sourceOfA(t)
			return uiTarget{Path: "/admin/inbound/" + src + "/" + strings.ReplaceAll(suffix, "{msg}", fx.deadLetterOfA(t, src)), Hidden: []string{"isolation fixture"}}
		}
	}
	note := func(suffix string) func(t *testing.T, fx *isolationFixture) uiTarget {
		return func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/notes/" + fx.noteOfA(t, "a-ui-note") + suffix, Hidden: []string{"a-ui-note"},
				Form: url.Values{"title": {"taken over"}, "genre": {"wiki"}, "published": {"1"}}}
		}
	}
	return map[string]uiRow{
		// Not row-scoped: the way in, the assets, sign-in and sign-out.
		// The overview sums and lists B's rows only, and its banner (on
		// every page) names none of A's endpoints.
		"GET /admin": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			src := fx.sourceOfA(t)
			fx.deadLetterOfA(t, src)
			return uiTarget{Path: "/admin", Hidden: []string{fx.failingEndpointOfA(t), "isolation", src, "a-source"}}
		}, WantB: http.StatusOK},
		"GET /admin/": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/?window=week", Hidden: []string{fx.failingEndpointOfA(t), "isolation"}}
		}, WantB: http.StatusOK},
		"GET /admin/static/*":     page(http.StatusOK, "/admin/static/app.css"),
		"GET /admin/login":        page(http.StatusSeeOther, "/admin/login"),
		"POST /admin/login":       page(http.StatusForbidden, "/admin/login"),
		"GET /admin/forgot":       page(http.StatusOK, "/admin/forgot"),
		"POST /admin/logout":      page(http.StatusSeeOther, "/admin/logout"),
		"GET /admin/webhooks/new": page(http.StatusOK, "/admin/webhooks/new"),
		"GET /admin/inbound/new":  page(http.StatusOK, "/admin/inbound/new"),
		"GET /admin/notes/new":    page(http.StatusOK, "/admin/notes/new"),
		"GET /admin/event-types":  page(http.StatusOK, "/admin/event-types"),

		// Lists show B's rows only.
		"GET /admin/webhooks": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/webhooks", Hidden: []string{fx.endpointOfA(t), "a-endpoint"}}
		}, WantB: http.StatusOK},
		"GET /admin/inbound": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/inbound", Hidden: []string{fx.sourceOfA(t), "a-source"}}
		}, WantB: http.StatusOK},
		"GET /admin/events": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/events", Hidden: []string{fx.eventOfA(t, false).String()}}
		}, WantB: http.StatusOK},
		"GET /admin/events/:id": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/events/" + fx.eventOfA(t, false).String()}
		}, WantB: http.StatusNotFound},
		"GET /admin/jobs/:id": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			status, body := fx.ts.do(t, http.MethodPost, "/api/admin/webhooks/"+fx.endpointOfA(t)+"/test", fx.A.Key, "")
			require.Equal(t, http.StatusAccepted, status, body)
			var out struct {
				JobID int64 `json:"job_id"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &out))
			return uiTarget{Path: "/admin/jobs/" + strconv.FormatInt(out.JobID, 10), Hidden: []string{"a-endpoint"}}
		}, WantB: http.StatusNotFound},
		"GET /admin/events/poisoned": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/events/poisoned", Hidden: []string{fx.eventOfA(t, true).String()}}
		}, WantB: http.StatusOK},
		"GET /admin/notes": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			id := fx.noteOfA(t, "a-listed-ui-note")
			return uiTarget{Path: "/admin/notes", Hidden: []string{id, "a-listed-ui-note"}}
		}, WantB: http.StatusOK},
		"GET /admin/api-keys": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			id, _ := fx.issueKeyForA(t, "a-ui-key")
			return uiTarget{Path: "/admin/api-keys", Hidden: []string{id.String(), "a-ui-key"}}
		}, WantB: http.StatusOK},
		"GET /admin/account": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			id, ip := fx.banForA(t)
			return uiTarget{Path: "/admin/account", Hidden: []string{fx.A.Email, fx.A.ID.String(), id.String(), ip, fx.sessionOfA(t).String()}}
		}, WantB: http.StatusOK},
		"GET /admin/suppliers": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			src := fx.sourceOfA(t)
			id := fx.createAsA(t, "/api/admin/supplier-connections", `{"name":"a-ui-connection","source_id":"`+src+`"}`)
			return uiTarget{Path: "/admin/suppliers", Hidden: []string{id, src, "a-ui-connection", "a-source"}}
		}, WantB: http.StatusOK},

		// Creating makes B's own row; A's rows cannot be named in it.
		"POST /admin/webhooks": {Target: func(*testing.T, *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/webhooks", Form: url.Values{"url": {"http://127.0.0.1:9/b"}, "event_types": {"code.issued"}}}
		}, WantB: http.StatusCreated},
		"POST /admin/inbound": {Target: func(*testing.T, *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/inbound", Form: url.Values{"name": {"b-source"}, "verifier": {"standard-webhooks"}}}
		}, WantB: http.StatusCreated},
		"POST /admin/api-keys": {Target: func(*testing.T, *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/api-keys", Form: url.Values{"name": {"b-ui-key"}}}
		}, WantB: http.StatusCreated},
		"POST /admin/notes": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			parent := fx.noteOfA(t, "a-ui-parent")
			return uiTarget{Path: "/admin/notes", Form: url.Values{"title": {"b-probe"}, "genre": {"wiki"}, "parent_id": {parent}}, Hidden: []string{"a-ui-parent"}}
		}, WantB: http.StatusUnprocessableEntity},
		"POST /admin/suppliers": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/suppliers", Form: url.Values{"name": {"b-probe"}, "source_id": {fx.sourceOfA(t)}}, Hidden: []string{"a-source"}}
		}, WantB: http.StatusNotFound},

		// The account forms act on B's account only.
		"POST /admin/account/email": {Target: func(_ *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/account/email", Form: url.Values{"email": {"taken-over-ui@example.test"}, "current_password": {fx.A.Password}}}
		}, WantB: http.StatusForbidden, After: func(t *testing.T, fx *isolationFixture, _ uiTarget) {
			o, err := fx.ts.App.Commands.Owners.Me(context.Background(), fx.A.ID)
			require.NoError(t, err)
			require.Equal(t, fx.A.Email, o.Email)
		}},
		"POST /admin/account/password": {Target: func(_ *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/account/password", Form: url.Values{"current_password": {fx.A.Password}, "new_password": {"taken over by B!"}}}
		}, WantB: http.StatusForbidden},
		"POST /admin/account/sessions/end": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			signIn(t, fx.ts, fx.A)
			return uiTarget{Path: "/admin/account/sessions/end"}
		}, WantB: http.StatusSeeOther, After: func(t *testing.T, fx *isolationFixture, _ uiTarget) {
			var n int
			require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM owner_sessions WHERE owner_id = $1`, fx.A.ID).Scan(&n))
			require.NotZero(t, n, "B ended A's sessions")
		}},
		"POST /admin/account/sessions/:id/end": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/account/sessions/" + fx.sessionOfA(t).String() + "/end"}
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			require.True(t, fx.sessionExists(t, strings.Split(strings.TrimPrefix(target.Path, "/admin/account/sessions/"), "/")[0]), "B ended A's session")
		}},
		"POST /admin/account/ip-bans/:id/lift": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			id, ip := fx.banForA(t)
			return uiTarget{Path: "/admin/account/ip-bans/" + id.String() + "/lift", Hidden: []string{ip}}
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			var lifted bool
			require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(), `SELECT lifted_at IS NOT NULL FROM ip_bans WHERE id = $1`,
				strings.Split(strings.TrimPrefix(target.Path, "/admin/account/ip-bans/"), "/")[0]).Scan(&lifted))
			require.False(t, lifted, "B lifted A's ban")
		}},
		"POST /admin/api-keys/:id/revoke": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			id, _ := fx.issueKeyForA(t, "a-ui-revocable")
			return uiTarget{Path: "/admin/api-keys/" + id.String() + "/revoke", Hidden: []string{"a-ui-revocable"}}
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			var revoked bool
			require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(), `SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = $1`,
				strings.Split(strings.TrimPrefix(target.Path, "/admin/api-keys/"), "/")[0]).Scan(&revoked))
			require.False(t, revoked, "B revoked A's key")
		}},

		// Row-scoped pages and forms on A's rows answer 404 and change nothing.
		"GET /admin/webhooks/:id":            {Target: endpoint(""), WantB: http.StatusNotFound},
		"POST /admin/webhooks/:id/test":      {Target: endpoint("/test"), WantB: http.StatusNotFound, After: endpointUnchanged},
		"POST /admin/webhooks/:id/redeliver": {Target: endpoint("/redeliver"), WantB: http.StatusNotFound, After: endpointUnchanged},
		"POST /admin/webhooks/:id/enable":    {Target: endpoint("/enable"), WantB: http.StatusNotFound, After: endpointUnchanged},
		"POST /admin/webhooks/:id/disable":   {Target: endpoint("/disable"), WantB: http.StatusNotFound, After: endpointUnchanged},
		"POST /admin/webhooks/:id/rotate":    {Target: endpoint("/rotate"), WantB: http.StatusNotFound, After: endpointUnchanged},
		"GET /admin/webhooks/:id/delete":     {Target: endpoint("/delete"), WantB: http.StatusNotFound},
		"GET /admin/webhooks/:id/edit":       {Target: endpoint("/edit"), WantB: http.StatusNotFound},
		"POST /admin/webhooks/:id/edit": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			tg := endpoint("/edit")(t, fx)
			tg.Form = url.Values{"url": {"http://127.0.0.1:9/taken"}, "description": {"taken over"}, "event_types": {"code.issued"},
				"filter": {`{"type":"code.issued"}`}}
			return tg
		}, WantB: http.StatusNotFound, After: endpointUnchanged},
		"POST /admin/webhooks/:id/delete":                 {Target: endpoint("/delete"), WantB: http.StatusNotFound, After: endpointUnchanged},
		"GET /admin/webhooks/:id/deliveries/:job":         {Target: deliveryTarget(""), WantB: http.StatusNotFound},
		"POST /admin/webhooks/:id/deliveries/:job/retry":  {Target: deliveryTarget("/retry"), WantB: http.StatusNotFound, After: deliveryUnchanged},
		"POST /admin/webhooks/:id/deliveries/:job/resend": {Target: deliveryTarget("/resend"), WantB: http.StatusNotFound, After: deliveryUnchanged},
		"POST /admin/webhooks/:id/recover": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			tg := endpoint("/recover")(t, fx)
			tg.Form = url.Values{"since": {"2000-01-01T00:00"}}
			return tg
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			endpointUnchanged(t, fx, target)
			id := strings.Split(strings.TrimPrefix(target.Path, "/admin/webhooks/"), "/")[0]
			require.Zero(t, fx.deliveriesTo(t, id), "B's recover queued deliveries to A's endpoint")
		}},
		"GET /admin/inbound/:id":                                  {Target: source(""), WantB: http.StatusNotFound},
		"GET /admin/inbound/:id/edit":                             {Target: source("/edit"), WantB: http.StatusNotFound},
		"POST /admin/inbound/:id/edit":                            {Target: source("/edit"), WantB: http.StatusNotFound, After: sourceOfAUnchanged},
		"POST /admin/inbound/:id/rotate":                          {Target: source("/rotate"), WantB: http.StatusNotFound, After: sourceOfAUnchanged},
		"POST /admin/inbound/:id/enable":                          {Target: source("/enable"), WantB: http.StatusNotFound, After: sourceOfAUnchanged},
		"POST /admin/inbound/:id/disable":                         {Target: source("/disable"), WantB: http.StatusNotFound, After: sourceOfAUnchanged},
		"POST /admin/inbound/:id/delete":                          {Target: source("/delete"), WantB: http.StatusNotFound, After: sourceOfAUnchanged},
		"GET /admin/inbound/:id/messages/:message_id":             {Target: deadLetter("messages/{msg}"), WantB: http.StatusNotFound},
		"POST /admin/inbound/:id/dead-letters/:message_id/replay": {Target: deadLetter("dead-letters/{msg}/replay"), WantB: http.StatusNotFound, After: deadLetterOfAStillDead},
		"POST /admin/inbound/:id/dead-letters/replay":             {Target: deadLetter("dead-letters/replay"), WantB: http.StatusNotFound, After: deadLetterOfAStillDead},
		"POST /admin/events/:id/release": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/events/" + fx.eventOfA(t, true).String() + "/release"}
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			var poisoned bool
			require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(), `SELECT poisoned_at IS NOT NULL FROM events WHERE id = $1`,
				strings.Split(strings.TrimPrefix(target.Path, "/admin/events/"), "/")[0]).Scan(&poisoned))
			require.True(t, poisoned, "B released A's event")
		}},
		"GET /admin/notes/:id":            {Target: note(""), WantB: http.StatusNotFound},
		"POST /admin/notes/:id":           {Target: note(""), WantB: http.StatusNotFound, After: noteOfAUnchanged("a-ui-note")},
		"POST /admin/notes/:id/publish":   {Target: note("/publish"), WantB: http.StatusNotFound, After: noteOfAUnchanged("a-ui-note")},
		"POST /admin/notes/:id/unpublish": {Target: note("/unpublish"), WantB: http.StatusNotFound, After: noteOfAUnchanged("a-ui-note")},
		"POST /admin/notes/:id/move": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			parent := fx.noteOfA(t, "a-ui-move-parent")
			child := fx.ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/notes", fx.A.Key, `{"genre":"wiki","title":"a-ui-move-child","parent_id":"`+parent+`"}`)
			return uiTarget{Path: "/admin/notes/" + child["id"].(string) + "/move", Form: url.Values{"parent_id": {""}}, Hidden: []string{"a-ui-move-child"}}
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			var got struct {
				ParentID *string `json:"parent_id"`
			}
			apiGet(t, fx.ts, fx.A.Key, "/api/admin/notes/"+strings.Split(strings.TrimPrefix(target.Path, "/admin/notes/"), "/")[0], &got)
			require.NotNil(t, got.ParentID, "B moved A's note to the root")
		}},
		"POST /admin/account/upgrade": {Target: func(*testing.T, *isolationFixture) uiTarget {
			return uiTarget{Path: "/admin/account/upgrade", Form: url.Values{"note": {"b's request"}}}
		}, WantB: http.StatusSeeOther, After: func(t *testing.T, fx *isolationFixture, _ uiTarget) {
			var n int
			require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(),
				`SELECT count(*) FROM events WHERE owner_id = $1 AND type = 'instance.upgrade_requested'`, fx.A.ID).Scan(&n))
			require.Zero(t, n, "B's request was recorded for A")
		}},
		"POST /admin/notes/:id/delete": {Target: note("/delete"), WantB: http.StatusNotFound, After: noteOfAUnchanged("a-ui-note")},
		"POST /admin/suppliers/:id/delete": {Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			id := fx.createAsA(t, "/api/admin/supplier-connections", `{"name":"a-ui-kept","source_id":"`+fx.sourceOfA(t)+`"}`)
			return uiTarget{Path: "/admin/suppliers/" + id + "/delete", Hidden: []string{"a-ui-kept"}}
		}, WantB: http.StatusNotFound, After: func(t *testing.T, fx *isolationFixture, target uiTarget) {
			id := strings.Split(strings.TrimPrefix(target.Path, "/admin/suppliers/"), "/")[0]
			status, body := fx.ts.do(t, http.MethodGet, "/api/admin/supplier-connections/"+id, fx.A.Key, "")
			require.Equal(t, http.StatusOK, status, body)
		}},
	}
}

// TestFirstContact is a new owner's first requests: / leads to the admin,
// an unknown admin page is an HTML 404 while an unknown API path keeps the
// JSON error, and River's UI links back to the admin.
func TestFirstContact(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	anon := &uiClient{ts: ts, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	status, _, loc := anon.get(t, "/")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin", loc)
	status, _, loc = anon.get(t, "/admin")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin/login?next=%2Fadmin", loc, "the overview is the landing page, after sign-in")

	status, body, _ := anon.get(t, "/admin/no-such-page")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "<!doctype html>")
	require.Contains(t, body, "There is no admin page at /admin/no-such-page")

	status, body = ts.do(t, http.MethodGet, "/api/admin/no-such-thing", o.Key, "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "NOT_FOUND", errCode(t, body), "the API keeps its JSON error")

	// River's UI is the operator's.
	_, err := ts.App.Commands.Owners.SetOperator(context.Background(), o.Email, true)
	require.NoError(t, err)
	u := signIn(t, ts, o)
	req, err := http.NewRequest(http.MethodGet, ts.URL+"/admin/tasks/jobs", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/html")
	resp, err := u.c.Do(req)
	require.NoError(t, err)
	status, body, _ = readUI(t, resp)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `<a id="standmeet-admin-link" href="/admin"`, "River UI links back to the admin")
	require.Contains(t, body, `id="root"`, "River UI's own page is still there")
}

// TestAdminAccountFormsAskFirst: the account's destructive forms answer
// with a confirmation page and change nothing until confirmed; the new
// forms refuse a post without the session's CSRF token.
func TestAdminAccountFormsAskFirst(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t)}
	u := signIn(t, ts, fx.A)
	banID, ip := fx.banForA(t)
	status, body, _ := u.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, ip)

	lifted := func() bool {
		var v bool
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT lifted_at IS NOT NULL FROM ip_bans WHERE id = $1`, banID).Scan(&v))
		return v
	}
	status, body, _ = u.post(t, "/admin/account/ip-bans/"+banID.String()+"/lift", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="confirm" value="yes"`)
	require.False(t, lifted(), "asking is not lifting")
	status, _, loc := u.post(t, "/admin/account/ip-bans/"+banID.String()+"/lift", url.Values{"confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin/account?notice=ban_lifted", loc)
	require.True(t, lifted())

	for _, path := range []string{"/admin/api-keys", "/admin/notes", "/admin/suppliers", "/admin/account/password", "/admin/account/sessions/end"} {
		status, body, _ = u.post(t, path, url.Values{"csrf_token": {"forged"}, "confirm": {"yes"}, "name": {"x"}})
		require.Equal(t, http.StatusForbidden, status, path)
		require.Contains(t, body, "CSRF_TOKEN_INVALID", path)
	}

	// One other session: listed, ended after a confirmation; this one stays.
	other := fx.sessionOfA(t)
	status, body, _ = u.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `data-session="`+other.String()+`"`)
	require.Regexp(t, `data-session="[0-9a-f-]+" data-current`, body, "this browser's session is marked")
	status, body, _ = u.post(t, "/admin/account/sessions/"+other.String()+"/end", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "That browser is signed out at once")
	require.True(t, fx.sessionExists(t, other.String()), "asking ends nothing")
	status, _, loc = u.post(t, "/admin/account/sessions/"+other.String()+"/end", url.Values{"confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/admin/account?notice=session_ended", loc)
	require.False(t, fx.sessionExists(t, other.String()))

	status, body, _ = u.post(t, "/admin/account/sessions/end", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Every browser signed in to this account is signed out")
	status, _, _ = u.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, status, "asking ends no session")
	status, _, loc = u.post(t, "/admin/account/sessions/end", url.Values{"confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.True(t, strings.HasPrefix(loc, "/admin/login"), loc)
	status, _, loc = u.get(t, "/admin/account")
	require.Equal(t, http.StatusSeeOther, status)
	require.True(t, strings.HasPrefix(loc, "/admin/login"), "the session ended: %s", loc)
	status, body = ts.do(t, http.MethodGet, "/api/admin/me", fx.A.Key, "")
	require.Equal(t, http.StatusOK, status, "API keys outlive the sessions: %s", body)
}
