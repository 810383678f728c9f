package web_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// fakeAuth is the owner domain's side: one account, sessions in memory, a
// CSRF token derived from the session token.
type fakeAuth struct {
	mu       sync.Mutex
	sessions map[string]uuid.UUID
	owner    uuid.UUID
}

func (a *fakeAuth) auth() web.Auth {
	return web.Auth{
		Login: func(w http.ResponseWriter, _ *http.Request, email, password string) error {
			if email != "owner@example.test" || password != "correct horse" {
				return domain.Unauthorized("INVALID_CREDENTIALS", "wrong email or password")
			}
			token := uuid.NewString()
			a.mu.Lock()
			a.sessions[token] = a.owner
			a.mu.Unlock()
			http.SetCookie(w, &http.Cookie{Name: "sess", Value: token, Path: "/", HttpOnly: true})
			return nil
		},
		Logout: func(w http.ResponseWriter, r *http.Request) error {
			if c, err := r.Cookie("sess"); err == nil {
				a.mu.Lock()
				delete(a.sessions, c.Value)
				a.mu.Unlock()
			}
			http.SetCookie(w, &http.Cookie{Name: "sess", Value: "", Path: "/", MaxAge: -1})
			return nil
		},
		Session: func(r *http.Request) (web.Session, error) {
			c, err := r.Cookie("sess")
			if err != nil {
				return web.Session{}, domain.Unauthorized("UNAUTHORIZED", "no session")
			}
			a.mu.Lock()
			owner, ok := a.sessions[c.Value]
			a.mu.Unlock()
			if !ok {
				return web.Session{}, domain.Unauthorized("UNAUTHORIZED", "no session")
			}
			return web.Session{Caller: op.Caller{OwnerID: owner}, CSRFToken: "csrf-" + c.Value}, nil
		},
	}
}

type bundle struct {
	srv    *httptest.Server
	client *http.Client
	world  *world
}

func setup(t *testing.T, ops func(*world) op.Set) *bundle {
	t.Helper()
	w := newWorld()
	fa := &fakeAuth{sessions: map[string]uuid.UUID{}, owner: uuid.New()}
	h, err := web.New(web.Deps{Ops: ops(w), Auth: fa.auth()})
	require.NoError(t, err)
	e := echo.New()
	h.Mount(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &bundle{srv: srv, client: client, world: w}
}

func allOps(w *world) op.Set { return w.ops() }

type answer struct {
	status   int
	body     string
	location string
}

func (b *bundle) get(t *testing.T, path string) answer {
	t.Helper()
	resp, err := b.client.Get(b.srv.URL + path)
	require.NoError(t, err)
	return read(t, resp)
}

func (b *bundle) post(t *testing.T, path string, form url.Values) answer {
	t.Helper()
	resp, err := b.client.PostForm(b.srv.URL+path, form)
	require.NoError(t, err)
	return read(t, resp)
}

func read(t *testing.T, resp *http.Response) answer {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, body: string(body), location: resp.Header.Get("Location")}
}

var (
	csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	secretRe  = regexp.MustCompile(`id="secret" class="mono" readonly value="([^"]+)"`)
)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	require.NotNil(t, m, "no csrf_token field in %s", body)
	return m[1]
}

// login signs in through the form and returns the session's CSRF token.
func (b *bundle) login(t *testing.T) string {
	t.Helper()
	form := b.get(t, "/admin/login")
	require.Equal(t, http.StatusOK, form.status)
	res := b.post(t, "/admin/login", url.Values{"csrf_token": {csrfOf(t, form.body)}, "email": {"owner@example.test"}, "password": {"correct horse"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	page := b.get(t, "/admin/webhooks")
	require.Equal(t, http.StatusOK, page.status)
	return csrfOf(t, page.body)
}

func TestPagesNeedASession(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	for _, p := range []string{"/admin/webhooks", "/admin/webhooks/new", "/admin/inbound", "/admin/events/poisoned", "/admin/webhooks/" + uuid.NewString()} {
		res := b.get(t, p)
		require.Equal(t, http.StatusSeeOther, res.status, p)
		require.Equal(t, "/admin/login?next="+url.QueryEscape(p), res.location, p)
	}
	res := b.post(t, "/admin/webhooks", url.Values{"url": {"https://x.test"}})
	require.Equal(t, http.StatusSeeOther, res.status)
	require.True(t, strings.HasPrefix(res.location, "/admin/login"))
	require.Zero(t, b.world.count("webhooks.create"))

	// A form posted after the session ended comes back to its page.
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/admin/webhooks/"+uuid.NewString()+"/test", strings.NewReader("csrf_token=x"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Referer", b.srv.URL+"/admin/webhooks/abc?notice=enabled")
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	got := read(t, resp)
	require.Equal(t, http.StatusSeeOther, got.status)
	require.Equal(t, "/admin/login?next="+url.QueryEscape("/admin/webhooks/abc?notice=enabled"), got.location)
}

func TestLoginHonoursOnlyLocalNext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		next, want string
	}{
		{"/admin/tasks?job=42", "/admin/tasks?job=42"},
		{"/admin/tasks/jobs/42", "/admin/tasks/jobs/42"},
		{"", "/admin/webhooks"},
		{"https://evil.test/", "/admin/webhooks"},
		{"//evil.test/x", "/admin/webhooks"},
		{"/\\evil.test", "/admin/webhooks"},
		{"javascript:alert(1)", "/admin/webhooks"},
		{"/admin\r\nLocation: https://evil.test", "/admin/webhooks"},
	}
	for _, c := range cases {
		t.Run(c.next, func(t *testing.T) {
			t.Parallel()
			b := setup(t, allOps)
			form := b.get(t, "/admin/login?next="+url.QueryEscape(c.next))
			require.Equal(t, http.StatusOK, form.status)
			res := b.post(t, "/admin/login", url.Values{"csrf_token": {csrfOf(t, form.body)}, "email": {"owner@example.test"},
				"password": {"correct horse"}, "next": {c.next}})
			require.Equal(t, http.StatusSeeOther, res.status, res.body)
			require.Equal(t, c.want, res.location)
		})
	}
}

func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	form := b.get(t, "/admin/login")
	token := csrfOf(t, form.body)

	wrong := b.post(t, "/admin/login", url.Values{"csrf_token": {token}, "email": {"owner@example.test"}, "password": {"nope"}})
	require.Equal(t, http.StatusUnauthorized, wrong.status)
	require.Contains(t, wrong.body, "wrong email or password")
	require.Contains(t, wrong.body, `value="owner@example.test"`, "the email is kept")

	forged := b.post(t, "/admin/login", url.Values{"csrf_token": {"forged"}, "email": {"owner@example.test"}, "password": {"correct horse"}})
	require.Equal(t, http.StatusForbidden, forged.status)
	require.Contains(t, forged.body, "CSRF_TOKEN_INVALID")

	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/admin/login", strings.NewReader(url.Values{"csrf_token": {token},
		"email": {"owner@example.test"}, "password": {"correct horse"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, read(t, resp).status)
}

func TestFormsNeedTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	b.login(t)
	for _, token := range []string{"", "csrf-someone-else"} {
		res := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {token}, "url": {"https://x.test"}, "event_types": {"webhook.test"}})
		require.Equal(t, http.StatusForbidden, res.status)
		require.Contains(t, res.body, "CSRF_TOKEN_INVALID")
	}
	require.Zero(t, b.world.count("webhooks.create"))
}

func TestEndpointLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	csrf := b.login(t)

	form := b.get(t, "/admin/webhooks/new")
	require.Equal(t, http.StatusOK, form.status)
	require.Contains(t, form.body, `<legend>corpus</legend>`, "event types are grouped by domain")
	require.Contains(t, form.body, `value="corpus.note.changed"`)
	require.Contains(t, form.body, `<label for="url">`)

	// An op error comes back on the form, which keeps what was typed.
	bad := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {csrf}, "url": {"https://r.test/hook"}})
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Contains(t, bad.body, "INVALID_EVENT_TYPES")
	require.Contains(t, bad.body, `value="https://r.test/hook"`)
	headerErr := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {csrf}, "url": {"https://r.test/hook"}, "event_types": {"webhook.test"}, "headers": {"no colon"}})
	require.Equal(t, http.StatusBadRequest, headerErr.status)
	require.Contains(t, headerErr.body, "INVALID_HEADER")

	created := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {csrf}, "url": {"https://r.test/hook"}, "description": {"receiver"},
		"event_types": {"webhook.test", "corpus.note.changed"}, "globs": {"access_request.*, code.*"}, "headers": {"X-Team: payments\n"}, "enabled": {"1"}})
	require.Equal(t, http.StatusCreated, created.status, created.body)
	m := secretRe.FindStringSubmatch(created.body)
	require.NotNil(t, m, created.body)
	secret := m[1]
	require.True(t, strings.HasPrefix(secret, "whsec_"))
	cont := regexp.MustCompile(`data-replace-url="(/admin/webhooks/[0-9a-f-]+)"`).FindStringSubmatch(created.body)
	require.NotNil(t, cont)
	endpointPage := cont[1]

	// The secret is never shown again.
	show := b.get(t, endpointPage)
	require.Equal(t, http.StatusOK, show.status)
	require.NotContains(t, show.body, secret)
	require.Contains(t, show.body, "access_request.*")
	require.Contains(t, show.body, "X-Team")
	require.NotContains(t, show.body, "payments", "header values may be credentials")
	list := b.get(t, "/admin/webhooks")
	require.NotContains(t, list.body, secret)
	require.Contains(t, list.body, "https://r.test/hook")

	sent := b.post(t, endpointPage+"/test", url.Values{"csrf_token": {csrf}})
	require.Equal(t, http.StatusSeeOther, sent.status)
	require.Equal(t, endpointPage+"?notice=test_sent&job=101", sent.location)
	after := b.get(t, sent.location)
	require.Contains(t, after.body, "Test event queued as job 101")
	require.Contains(t, after.body, `href="/admin/tasks?job=101"`)
	require.Contains(t, after.body, `data-state="completed"`)
	require.NotContains(t, after.body, "data-refresh", "nothing left in flight")

	ask := b.post(t, endpointPage+"/redeliver", url.Values{"csrf_token": {csrf}})
	require.Equal(t, http.StatusOK, ask.status, "redeliver asks first")
	require.Contains(t, ask.body, `name="confirm" value="yes"`)
	redo := b.post(t, endpointPage+"/redeliver", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, endpointPage+"?notice=redelivered&count=3&discarded=2&cancelled=1&skipped=0", redo.location)

	ask = b.post(t, endpointPage+"/disable", url.Values{"csrf_token": {csrf}})
	require.Equal(t, http.StatusOK, ask.status, "disable asks first")
	require.Contains(t, ask.body, "Disable https://")
	off := b.post(t, endpointPage+"/disable", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, endpointPage+"?notice=disabled", off.location)
	disabled := b.get(t, off.location)
	require.Contains(t, disabled.body, `<span class="badge bad">Disabled</span> <span>by the owner</span>`, "the state is said once")
	require.NotContains(t, disabled.body, "Disabled</span> <span>disabled")
	require.Contains(t, b.get(t, "/admin/webhooks").body, `<span class="badge bad">Disabled</span> <small>by the owner</small>`)
	require.Contains(t, disabled.body, endpointPage+"/enable")
	on := b.post(t, endpointPage+"/enable", url.Values{"csrf_token": {csrf}})
	require.Contains(t, b.get(t, on.location).body, endpointPage+"/disable")

	ask = b.post(t, endpointPage+"/rotate", url.Values{"csrf_token": {csrf}})
	require.Equal(t, http.StatusOK, ask.status)
	require.Contains(t, ask.body, `name="confirm" value="yes"`)
	require.Contains(t, ask.body, "stays valid for 24 hours")
	require.NotContains(t, ask.body, "whsec_rotated_")
	require.Equal(t, 0, b.world.count("webhooks.rotate_secret"), "asking is not rotating")
	rotated := b.post(t, endpointPage+"/rotate", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusOK, rotated.status)
	require.Contains(t, rotated.body, "whsec_rotated_")
	require.Contains(t, rotated.body, `id="grace"`)
	require.Contains(t, rotated.body, "standardwebhooks", "the page shows the verification snippets")
	require.NotContains(t, b.get(t, endpointPage).body, "whsec_rotated_")

	confirm := b.get(t, endpointPage+"/delete")
	require.Equal(t, http.StatusOK, confirm.status)
	require.Contains(t, confirm.body, "Delete endpoint")
	require.Equal(t, 0, b.world.count("webhooks.delete"), "asking is not deleting")
	gone := b.post(t, endpointPage+"/delete", url.Values{"csrf_token": {csrf}})
	require.Equal(t, "/admin/webhooks?notice=deleted", gone.location)
	require.Equal(t, http.StatusNotFound, b.get(t, endpointPage).status)
}

func TestNoticesShowOnlyKnownText(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	b.login(t)
	res := b.get(t, "/admin/webhooks?notice=test_sent&job=%3Cscript%3E")
	require.Contains(t, res.body, "Test event queued as job ?.")
	require.NotContains(t, res.body, "<script>")
	res = b.get(t, "/admin/webhooks?notice=Your+account+is+locked")
	require.NotContains(t, res.body, "locked")
}

func TestInboundSourceAndDeadLetterReplay(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	csrf := b.login(t)
	form := b.get(t, "/admin/inbound/new")
	require.Equal(t, http.StatusOK, form.status)
	require.Contains(t, form.body, `value="standard-webhooks" checked`)

	created := b.post(t, "/admin/inbound", url.Values{"csrf_token": {csrf}, "name": {"Billing"}, "verifier": {"standard-webhooks"}, "enabled": {"1"}})
	require.Equal(t, http.StatusCreated, created.status, created.body)
	require.Contains(t, created.body, "whsec_inbound_")
	require.Regexp(t, `value="http://127\.0\.0\.1:\d+/hooks/[0-9a-f-]+"`, created.body, "the receive URL is absolute")
	srcPage := regexp.MustCompile(`data-replace-url="(/admin/inbound/[0-9a-f-]+)"`).FindStringSubmatch(created.body)[1]

	show := b.get(t, srcPage)
	require.Equal(t, http.StatusOK, show.status)
	require.NotContains(t, show.body, "whsec_inbound_")
	require.Contains(t, show.body, "msg_dead")
	replay := regexp.MustCompile(`action="(` + srcPage + `/dead-letters/[0-9a-f-]+/replay)"`).FindStringSubmatch(show.body)
	require.NotNil(t, replay, show.body)
	res := b.post(t, replay[1], url.Values{"csrf_token": {csrf}})
	require.Equal(t, srcPage+"?notice=replayed", res.location)
	after := b.get(t, res.location)
	require.Contains(t, after.body, "No dead letters.")
	require.Contains(t, after.body, `data-state="done"`)

	ask := b.post(t, srcPage+"/rotate", url.Values{"csrf_token": {csrf}})
	require.Equal(t, http.StatusOK, ask.status)
	require.Contains(t, ask.body, "keeps verifying for 24 hours")
	require.NotContains(t, ask.body, "whsec_inbound_rotated")
	require.Equal(t, 0, b.world.count("inbound_sources.rotate_secret"), "asking is not rotating")
	rotated := b.post(t, srcPage+"/rotate", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusOK, rotated.status)
	require.Contains(t, rotated.body, "whsec_inbound_rotated")
	require.NotContains(t, b.get(t, srcPage).body, "whsec_inbound_rotated")

	off := b.post(t, srcPage+"/disable", url.Values{"csrf_token": {csrf}})
	require.Equal(t, srcPage+"?notice=source_disabled", off.location)

	list := b.get(t, "/admin/inbound")
	require.Contains(t, list.body, "Billing")

	hmacForm := b.post(t, "/admin/inbound", url.Values{"csrf_token": {csrf}, "name": {""}, "verifier": {"hmac"}, "signature_header": {"X-Sig"}, "tolerance_seconds": {"abc"}})
	require.Equal(t, http.StatusBadRequest, hmacForm.status)
	require.Contains(t, hmacForm.body, "INVALID_NUMBER")
	require.Contains(t, hmacForm.body, `value="X-Sig"`)
}

func TestPoisonedEventsRelease(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	csrf := b.login(t)
	id := uuid.New()
	b.world.mu.Lock()
	b.world.poisoned = []eventop.Event{{ID: id, Type: "corpus.note.changed", Subject: "wiki://a", RelayAttempts: 5, RelayError: ptr("boom")}}
	b.world.mu.Unlock()
	page := b.get(t, "/admin/events/poisoned")
	require.Contains(t, page.body, "boom")
	res := b.post(t, "/admin/events/"+id.String()+"/release", url.Values{"csrf_token": {csrf}})
	require.Equal(t, "/admin/events/poisoned?notice=released", res.location)
	require.Contains(t, b.get(t, res.location).body, "No poisoned events")
}

func TestSectionsFollowTheDeclaredOps(t *testing.T) {
	t.Parallel()
	onlyWebhooks := func(w *world) op.Set {
		var out op.Set
		for _, d := range w.ops() {
			if strings.HasPrefix(d.Meta().Name, "webhooks.") {
				out = append(out, d)
			}
		}
		return out
	}
	b := setup(t, onlyWebhooks)
	b.login(t)
	page := b.get(t, "/admin/webhooks")
	require.Contains(t, page.body, "Integrations")
	require.NotContains(t, page.body, `href="/admin/tasks"`, "Tasks only for the operator")
	require.NotContains(t, page.body, `href="/admin/inbound"`)
	require.Equal(t, http.StatusNotFound, b.get(t, "/admin/inbound").status)
}

func TestLogout(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	csrf := b.login(t)
	res := b.post(t, "/admin/logout", url.Values{"csrf_token": {csrf}})
	require.Equal(t, "/admin/login", res.location)
	require.Equal(t, http.StatusSeeOther, b.get(t, "/admin/webhooks").status)
}

func TestHeadersAndStatic(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	resp, err := b.client.Get(b.srv.URL + "/admin/login")
	require.NoError(t, err)
	resp.Body.Close()
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	for p, ct := range map[string]string{"/admin/static/app.css": "text/css", "/admin/static/app.js": "text/javascript"} {
		resp, err := b.client.Get(b.srv.URL + p)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		require.Contains(t, resp.Header.Get("Content-Type"), ct)
	}
	require.Equal(t, http.StatusNotFound, b.get(t, "/admin/static/../web.go").status)
}

func TestLocalPath(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"/admin/tasks?job=1": "/admin/tasks?job=1",
		"/":                  "/",
		"":                   "d",
		"admin":              "d",
		"//evil.test":        "d",
		"/\\evil.test":       "d",
		"/a\\b":              "d",
		"https://evil.test":  "d",
		"/%0d%0aX: y":        "/%0d%0aX: y",
		"/a\nb":              "d",
		"/a\tb":              "d",
	}
	for in, want := range cases {
		require.Equal(t, want, web.LocalPath(in, "d"), in)
	}
}

// FuzzLocalPath: whatever comes in, what goes out is the default or a path
// on this site that a browser cannot read as another host.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/admin", "//x", "/\\x", "https://x", "/a?b=//c", "/\t/x", " /x", "/%2F%2Fx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := web.LocalPath(s, "/d")
		if got == "/d" {
			return
		}
		require.Equal(t, s, got)
		require.True(t, strings.HasPrefix(got, "/"))
		require.False(t, strings.HasPrefix(got, "//"))
		require.NotContains(t, got, "\\")
		u, err := url.Parse(got)
		require.NoError(t, err)
		require.Empty(t, u.Host)
		require.Empty(t, u.Scheme)
		// What a browser resolves it to stays on this host.
		base, _ := url.Parse("https://standmeet.test/admin/login")
		require.Equal(t, "standmeet.test", base.ResolveReference(u).Host)
	})
}

func TestEditFormSendsEveryField(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	csrf := b.login(t)
	created := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {csrf}, "url": {"https://r.test/hook"},
		"event_types": {"webhook.test"}, "globs": {"code.*"}, "headers": {"X-Team: payments"}, "enabled": {"1"},
		"max_in_flight": {"2"}, "timeout_seconds": {"5"}, "max_attempts": {"9"}})
	require.Equal(t, http.StatusCreated, created.status, created.body)
	var id uuid.UUID
	for k := range b.world.endpoints {
		id = k
	}
	e := b.world.endpoints[id]
	require.Equal(t, []int{2, 5, 9}, []int{e.MaxInFlight, e.TimeoutSeconds, e.MaxAttempts}, "the create form sends the settings")
	page := "/admin/webhooks/" + id.String()

	form := b.get(t, page+"/edit")
	require.Equal(t, http.StatusOK, form.status)
	require.Contains(t, form.body, `value="https://r.test/hook"`)
	require.Contains(t, form.body, `value="webhook.test" checked`)
	require.Contains(t, form.body, `name="globs" type="text" placeholder="corpus.* access_request.*" value="code.*"`)
	require.Contains(t, form.body, `name="timeout_seconds" type="number" min="1" max="10" required value="5"`)
	require.NotContains(t, form.body, `">X-Team: payments</textarea>`, "header values are not shown")

	bad := b.post(t, page+"/edit", url.Values{"csrf_token": {csrf}, "url": {"https://s.test/h"}, "event_types": {"webhook.test"},
		"max_in_flight": {"1"}, "timeout_seconds": {"x"}, "max_attempts": {"3"}})
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Contains(t, bad.body, "timeout_seconds must be a whole number")
	require.Equal(t, "https://r.test/hook", b.world.endpoints[id].URL, "a refused edit changes nothing")

	saved := b.post(t, page+"/edit", url.Values{"csrf_token": {csrf}, "url": {"https://s.test/h"}, "description": {"renamed"},
		"event_types": {"webhook.test"}, "globs": {"corpus.*"}, "headers": {"X-New: 1"},
		"max_in_flight": {"3"}, "timeout_seconds": {"4"}, "max_attempts": {"6"}})
	require.Equal(t, http.StatusSeeOther, saved.status, saved.body)
	require.Equal(t, page+"?notice=updated", saved.location)
	e = b.world.endpoints[id]
	require.Equal(t, "https://s.test/h", e.URL)
	require.Equal(t, "renamed", e.Description)
	require.Equal(t, []string{"webhook.test", "corpus.*"}, e.EventTypes)
	require.Equal(t, map[string]string{"X-New": "1"}, e.Headers)
	require.Equal(t, []int{3, 4, 6}, []int{e.MaxInFlight, e.TimeoutSeconds, e.MaxAttempts})
	require.Contains(t, b.get(t, saved.location).body, "3 in flight, 4 s timeout, 6 attempts")

	kept := b.post(t, page+"/edit", url.Values{"csrf_token": {csrf}, "url": {"https://s.test/h"}, "event_types": {"webhook.test"},
		"max_in_flight": {"3"}, "timeout_seconds": {"4"}, "max_attempts": {"6"}})
	require.Equal(t, http.StatusSeeOther, kept.status)
	require.Equal(t, map[string]string{"X-New": "1"}, b.world.endpoints[id].Headers, "empty headers field keeps them")
	cleared := b.post(t, page+"/edit", url.Values{"csrf_token": {csrf}, "url": {"https://s.test/h"}, "event_types": {"webhook.test"},
		"clear_headers": {"1"}, "max_in_flight": {"3"}, "timeout_seconds": {"4"}, "max_attempts": {"6"}})
	require.Equal(t, http.StatusSeeOther, cleared.status)
	require.Empty(t, b.world.endpoints[id].Headers)
}
