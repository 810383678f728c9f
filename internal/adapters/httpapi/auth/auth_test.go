package auth_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
)

const password = "correct horse battery"

type testBundle struct {
	svc   *owner.Service
	mem   *ownertest.Memory
	gate  *auth.Gate
	echo  *echo.Echo
	owner owner.Owner
}

// cheapArgon2id keeps the real algorithm at a test-friendly cost.
func cheapArgon2id() auth.Argon2id {
	return auth.NewArgon2id(argon2id.Params{Memory: 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
}

func setup(t *testing.T, opts auth.Options) *testBundle {
	t.Helper()
	mem := ownertest.NewMemory()
	svc, err := owner.New(owner.Deps{UoW: mem, Hasher: cheapArgon2id(), Tokens: auth.RandomTokens{}})
	require.NoError(t, err)
	o, err := svc.CreateOwner(context.Background(), "owner@example.com", password)
	require.NoError(t, err)
	gate := auth.New(svc, opts, zap.NewNop())
	// The owner ops at their lines of the server's route table.
	var routes []httpapi.Route
	for _, r := range httpapi.Routes() {
		if _, ok := svc.Ops().Find(r.Op); ok {
			routes = append(routes, r)
		}
	}
	eps, err := httpapi.Bind(svc.Ops(), routes)
	require.NoError(t, err)
	e := httpapi.New(httpapi.Deps{
		Auth:       gate,
		Endpoints:  eps,
		Middleware: []echo.MiddlewareFunc{gate.BanMiddleware},
		Mounters:   []httpapi.Mounter{gate},
	}).Echo()
	return &testBundle{svc: svc, mem: mem, gate: gate, echo: e, owner: o}
}

type reqOpt func(r *http.Request)

func withCookie(name, value string) reqOpt {
	return func(r *http.Request) { r.AddCookie(&http.Cookie{Name: name, Value: value}) }
}

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func from(addr string) reqOpt { return func(r *http.Request) { r.RemoteAddr = addr } }

func (b *testBundle) serve(method, path, body string, opts ...reqOpt) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.RemoteAddr = "192.0.2.10:40000"
	for _, o := range opts {
		o(r)
	}
	w := httptest.NewRecorder()
	b.echo.ServeHTTP(w, r)
	return w
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body httpapi.ErrorBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), w.Body.String())
	return body.Error.Code
}

func cookieOf(w *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range w.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (b *testBundle) login(t *testing.T) (session, csrf string) {
	t.Helper()
	w := b.serve(http.MethodPost, "/api/auth/login", `{"email":"OWNER@example.com","password":"`+password+`"}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var resp auth.LoginResponse
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
	require.Equal(t, b.owner.ID, resp.Owner.ID)
	s, c := cookieOf(w, auth.SessionCookie), cookieOf(w, auth.CSRFCookie)
	require.NotNil(t, s)
	require.NotNil(t, c)
	require.Equal(t, resp.CSRFToken, c.Value)
	return s.Value, c.Value
}

func TestLoginSetsTheCookies(t *testing.T) {
	t.Parallel()
	b := setup(t, auth.Options{})
	w := b.serve(http.MethodPost, "/api/auth/login", `{"email":"owner@example.com","password":"`+password+`"}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	s, c := cookieOf(w, auth.SessionCookie), cookieOf(w, auth.CSRFCookie)
	require.True(t, s.HttpOnly)
	require.Equal(t, http.SameSiteLaxMode, s.SameSite)
	require.Equal(t, "/", s.Path)
	require.False(t, s.Secure, "plain HTTP cannot carry a Secure cookie")
	require.False(t, c.HttpOnly, "the page's script reads the CSRF cookie")
	require.Equal(t, auth.CSRFTokenFor(s.Value), c.Value)
	require.NotContains(t, w.Body.String(), s.Value, "the session token is only in the cookie")
	require.NotContains(t, w.Body.String(), "hash")

	// Over TLS the cookies are Secure.
	w = b.serve(http.MethodPost, "/api/auth/login", `{"email":"owner@example.com","password":"`+password+`"}`,
		func(r *http.Request) { r.TLS = &tls.ConnectionState{} })
	require.Equal(t, http.StatusOK, w.Code)
	require.True(t, cookieOf(w, auth.SessionCookie).Secure)
	require.True(t, cookieOf(w, auth.CSRFCookie).Secure)
}

func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, contentType string
		status                  int
		code                    string
	}{
		{"wrong password", `{"email":"owner@example.com","password":"nope nope nope"}`, "application/json", 401, owner.CodeInvalidCredentials},
		{"unknown account", `{"email":"x@example.com","password":"` + password + `"}`, "application/json", 401, owner.CodeInvalidCredentials},
		{"form post", `email=owner%40example.com`, "application/x-www-form-urlencoded", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"bad json", `{"email":`, "application/json", 400, "INVALID_JSON"},
		{"unknown field", `{"email":"owner@example.com","password":"x","admin":true}`, "application/json", 400, "INVALID_JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, auth.Options{})
			w := b.serve(http.MethodPost, "/api/auth/login", c.body, withHeader("Content-Type", c.contentType))
			require.Equal(t, c.status, w.Code, w.Body.String())
			require.Equal(t, c.code, errorCode(t, w))
			require.Nil(t, cookieOf(w, auth.SessionCookie))
		})
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	b := setup(t, auth.Options{})
	ctx := context.Background()
	key, err := b.svc.IssueAPIKey(ctx, b.owner.ID, "test")
	require.NoError(t, err)
	session, csrf := b.login(t)
	other, _ := setup(t, auth.Options{}).login(t) // a session of another instance: unknown here
	cookies := func(s, c string) []reqOpt {
		return []reqOpt{withCookie(auth.SessionCookie, s), withCookie(auth.CSRFCookie, c)}
	}
	cases := []struct {
		name   string
		method string
		opts   []reqOpt
		status int
		code   string
	}{
		{"no credentials", "GET", nil, 401, auth.CodeUnauthorized},
		{"bearer key", "GET", []reqOpt{withHeader("Authorization", "Bearer "+key.Key)}, 200, ""},
		{"bearer key, lower-case scheme", "GET", []reqOpt{withHeader("Authorization", "bearer "+key.Key)}, 200, ""},
		{"bearer key needs no csrf", "POST", []reqOpt{withHeader("Authorization", "Bearer "+key.Key)}, 202, ""},
		{"bearer garbage", "GET", []reqOpt{withHeader("Authorization", "Bearer smk_nope")}, 401, owner.CodeInvalidAPIKey},
		{"basic auth", "GET", []reqOpt{withHeader("Authorization", "Basic b3duZXI6cGFzcw==")}, 401, auth.CodeUnauthorized},
		{"session cookie, safe method", "GET", []reqOpt{withCookie(auth.SessionCookie, session)}, 200, ""},
		{"unknown session", "GET", []reqOpt{withCookie(auth.SessionCookie, other)}, 401, owner.CodeInvalidSession},
		{"cookie POST without csrf", "POST", cookies(session, csrf), 403, auth.CodeCSRF},
		{"cookie POST with csrf header", "POST", append(cookies(session, csrf), withHeader(auth.CSRFHeader, csrf)), 202, ""},
		{"cookie POST, header without cookie", "POST", []reqOpt{withCookie(auth.SessionCookie, session), withHeader(auth.CSRFHeader, csrf)}, 403, auth.CodeCSRF},
		{"cookie POST, planted csrf pair", "POST", append(cookies(session, "attacker"), withHeader(auth.CSRFHeader, "attacker")), 403, auth.CodeCSRF},
		{"cookie POST, another session's csrf", "POST", append(cookies(session, auth.CSRFTokenFor(other)), withHeader(auth.CSRFHeader, auth.CSRFTokenFor(other))), 403, auth.CodeCSRF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/api/admin/me"
			body := ""
			if c.method == "POST" {
				path, body = "/api/admin/instance/upgrade-request", `{"note":"x"}`
			}
			w := b.serve(c.method, path, body, c.opts...)
			require.Equal(t, c.status, w.Code, w.Body.String())
			if c.code != "" {
				require.Equal(t, c.code, errorCode(t, w))
			}
		})
	}

	// The csrf_token form field counts as the header does.
	r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(url.Values{"csrf_token": {csrf}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: session})
	r.AddCookie(&http.Cookie{Name: auth.CSRFCookie, Value: csrf})
	caller, err := b.gate.Authenticate(r)
	require.NoError(t, err)
	require.Equal(t, csrf, auth.CSRFToken(r))
	require.NoError(t, b.gate.CheckCSRF(r))
	sess, err := b.gate.SessionFromRequest(r)
	require.NoError(t, err)
	require.Equal(t, b.owner.ID, sess.OwnerID)
	require.Equal(t, op.Caller{OwnerID: b.owner.ID, SessionID: sess.ID}, caller, "a session caller carries its session")
}

func TestLogout(t *testing.T) {
	t.Parallel()
	b := setup(t, auth.Options{})
	session, csrf := b.login(t)
	w := b.serve(http.MethodPost, "/api/auth/logout", "", withCookie(auth.SessionCookie, session), withCookie(auth.CSRFCookie, csrf))
	require.Equal(t, http.StatusForbidden, w.Code, "a cross-site logout lacks the csrf token")
	w = b.serve(http.MethodGet, "/api/admin/me", "", withCookie(auth.SessionCookie, session))
	require.Equal(t, http.StatusOK, w.Code)

	w = b.serve(http.MethodPost, "/api/auth/logout", "", withCookie(auth.SessionCookie, session), withCookie(auth.CSRFCookie, csrf), withHeader(auth.CSRFHeader, csrf))
	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	require.Equal(t, -1, cookieOf(w, auth.SessionCookie).MaxAge)
	w = b.serve(http.MethodGet, "/api/admin/me", "", withCookie(auth.SessionCookie, session))
	require.Equal(t, http.StatusUnauthorized, w.Code)

	// Without a live session logout just clears the cookies.
	w = b.serve(http.MethodPost, "/api/auth/logout", "")
	require.Equal(t, http.StatusNoContent, w.Code)
}

func TestRecoverRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, auth.Options{})
	for _, email := range []string{"owner@example.com", "nobody@example.com"} {
		w := b.serve(http.MethodPost, "/api/auth/recover", `{"email":"`+email+`"}`)
		require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
	}
	msgs := b.mem.Delivered()
	require.Len(t, msgs, 1)

	w := b.serve(http.MethodPost, "/api/auth/recover/complete", `{"token":"`+msgs[0].Token+`","password":"a new long passphrase"}`)
	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	w = b.serve(http.MethodPost, "/api/auth/recover/complete", `{"token":"`+msgs[0].Token+`","password":"a new long passphrase"}`)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Equal(t, owner.CodeInvalidRecoveryToken, errorCode(t, w))
	w = b.serve(http.MethodPost, "/api/auth/login", `{"email":"owner@example.com","password":"a new long passphrase"}`)
	require.Equal(t, http.StatusOK, w.Code)

	for i := 0; i < b.svc.Limits().MaxRecoveriesPerIP-2; i++ {
		w := b.serve(http.MethodPost, "/api/auth/recover", `{"email":"x@example.com"}`)
		require.Equal(t, http.StatusAccepted, w.Code)
	}
	w = b.serve(http.MethodPost, "/api/auth/recover", `{"email":"x@example.com"}`)
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, "RATE_LIMITED", errorCode(t, w))
}

func TestBannedClientsAreRefusedBeforeAnyHandler(t *testing.T) {
	t.Parallel()
	b := setup(t, auth.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	const attacker = "203.0.113.50"
	for i := 0; i < b.svc.Limits().BanAfter; i++ {
		w := b.serve(http.MethodPost, "/api/auth/login", `{"email":"owner@example.com","password":"wrong password!"}`, from(attacker+":5555"))
		require.Contains(t, []int{401, 429}, w.Code)
	}
	for _, path := range []string{"/healthz", "/api/auth/login", "/api/admin/me", "/nowhere"} {
		w := b.serve(http.MethodGet, path, "", from(attacker+":5555"))
		require.Equal(t, http.StatusForbidden, w.Code, path)
		require.Equal(t, owner.CodeIPBanned, errorCode(t, w))
	}
	// Through a trusted proxy, the forwarded address is the client.
	w := b.serve(http.MethodGet, "/healthz", "", from("10.1.2.3:80"), withHeader("X-Forwarded-For", attacker))
	require.Equal(t, http.StatusForbidden, w.Code)
	// An untrusted peer cannot borrow (or shed) an address with the header.
	w = b.serve(http.MethodGet, "/healthz", "", from("192.0.2.99:80"), withHeader("X-Forwarded-For", attacker))
	require.Equal(t, http.StatusOK, w.Code)
	w = b.serve(http.MethodGet, "/healthz", "", from(attacker+":5555"), withHeader("X-Forwarded-For", "192.0.2.1"))
	require.Equal(t, http.StatusForbidden, w.Code)
	// IPv4-mapped IPv6 is the same address.
	w = b.serve(http.MethodGet, "/healthz", "", from("[::ffff:"+attacker+"]:5555"))
	require.Equal(t, http.StatusForbidden, w.Code)
}

func TestClientIP(t *testing.T) {
	t.Parallel()
	g := auth.New(nil, auth.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}, nil)
	cases := []struct{ remote, xff, want string }{
		{"192.0.2.1:1234", "", "192.0.2.1"},
		{"192.0.2.1:1234", "198.51.100.1", "192.0.2.1"},
		{"10.0.0.1:1234", "198.51.100.1", "198.51.100.1"},
		{"10.0.0.1:1234", "198.51.100.9, 198.51.100.1, 10.0.0.2", "198.51.100.1"},
		{"10.0.0.1:1234", "", "10.0.0.1"},
		{"10.0.0.1:1234", "garbage", "10.0.0.1"},
		{"[::1]:1234", "2001:db8::1", "2001:db8::1"},
		{"[::ffff:192.0.2.1]:1234", "", "192.0.2.1"},
		{"[fe80::1%eth0]:1234", "", "fe80::1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		require.Equal(t, c.want, g.ClientIP(r), "%s %q", c.remote, c.xff)
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("192.0.2.1:1", "198.51.100.1")
	f.Add("10.0.0.1:1", "a, b,,10.0.0.2")
	g := auth.New(nil, auth.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, nil)
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		got := g.ClientIP(r)
		peer, err := netip.ParseAddrPort(remote)
		if err == nil && !netip.MustParsePrefix("10.0.0.0/8").Contains(peer.Addr().Unmap()) {
			// An untrusted peer is always its own address, whatever it sends.
			if got != peer.Addr().Unmap().WithZone("").String() {
				t.Fatalf("untrusted %q with XFF %q gave %q", remote, xff, got)
			}
		}
	})
}

func TestArgon2idAndTokens(t *testing.T) {
	t.Parallel()
	h := auth.NewArgon2id(auth.DefaultArgon2idParams())
	hash, err := h.Hash(password)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(hash, "$argon2id$"))
	require.NotContains(t, hash, password)
	ok, err := h.Verify(password, hash)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = h.Verify(password+"!", hash)
	require.NoError(t, err)
	require.False(t, ok)
	again, err := h.Hash(password)
	require.NoError(t, err)
	require.NotEqual(t, hash, again, "salted")
	_, err = h.Verify(password, "not a hash")
	require.Error(t, err)

	a, err := auth.RandomTokens{}.Token(32)
	require.NoError(t, err)
	b, err := auth.RandomTokens{}.Token(32)
	require.NoError(t, err)
	require.Len(t, a, 43)
	require.NotEqual(t, a, b)
}

func TestLogMailerShowsTheTokenOnlyInDevelopment(t *testing.T) {
	t.Parallel()
	msg := owner.RecoveryMessage{Email: "owner@example.com", Token: "the-secret-token"}
	for _, dev := range []bool{true, false} {
		core, logs := observer.New(zapcore.DebugLevel)
		auth.LogMailer{Logger: zap.New(core), Dev: dev}.DeliverRecovery(context.Background(), msg)
		entries := logs.All()
		require.Len(t, entries, 1)
		line, err := json.Marshal(entries[0].ContextMap())
		require.NoError(t, err)
		all := entries[0].Message + string(line)
		require.Contains(t, all, "owner@example.com")
		if dev {
			require.Contains(t, entries[0].Message, "DEVELOPMENT ONLY")
			require.Contains(t, all, msg.Token)
		} else {
			require.NotContains(t, all, msg.Token)
		}
	}
}

// TestAuthenticateHandsOnTheKeysScopes: a scoped key's caller carries its
// scopes, so op calls refuse what they do not grant; a full key's and a
// session's carry none.
func TestAuthenticateHandsOnTheKeysScopes(t *testing.T) {
	t.Parallel()
	b := setup(t, auth.Options{})
	ctx := context.Background()
	scoped, err := b.svc.IssueScopedAPIKey(ctx, b.owner.ID, "pub", []op.Scope{op.ScopePublish})
	require.NoError(t, err)
	full, err := b.svc.IssueAPIKey(ctx, b.owner.ID, "full")
	require.NoError(t, err)
	for key, want := range map[string]op.Scopes{scoped.Key: {op.ScopePublish}, full.Key: nil} {
		r := httptest.NewRequest(http.MethodPost, "/api/admin/events", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		caller, err := b.gate.Authenticate(r)
		require.NoError(t, err)
		require.Equal(t, b.owner.ID, caller.OwnerID)
		require.Equal(t, want, caller.Scopes)
	}
	session, _ := b.login(t)
	r := httptest.NewRequest(http.MethodGet, "/api/admin/me", nil)
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: session})
	caller, err := b.gate.Authenticate(r)
	require.NoError(t, err)
	require.Nil(t, caller.Scopes, "a session is never scoped")
}
