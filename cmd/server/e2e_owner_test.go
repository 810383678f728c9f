package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
	"github.com/standmeet/standmeet/internal/testdb"
)

// testOwner is an owner of a test server, with its password and one API key.
type testOwner struct {
	ID       uuid.UUID
	Email    string
	Password string
	Key      string
	KeyID    uuid.UUID
}

// newOwnerAccount creates an owner with a random email and password and
// issues it an API key (recording api_key.issued).
func (ts *testServer) newOwnerAccount(t *testing.T) testOwner {
	t.Helper()
	ctx := context.Background()
	svc := ts.App.Commands.Owners
	email := "owner-" + uuid.NewString()[:8] + "@example.test"
	password := "pw-" + uuid.NewString()
	o, err := svc.CreateOwner(ctx, email, password)
	require.NoError(t, err)
	k, err := svc.IssueAPIKey(ctx, o.ID, "e2e")
	require.NoError(t, err)
	return testOwner{ID: o.ID, Email: email, Password: password, Key: k.Key, KeyID: k.ID}
}

// newOwner creates an owner and an API key for it, for any e2e test that
// needs credentials: ts.do(t, method, path, key, body).
func (ts *testServer) newOwner(t *testing.T) (uuid.UUID, string) {
	t.Helper()
	o := ts.newOwnerAccount(t)
	return o.ID, o.Key
}

// ownerClient is an HTTP client with a cookie jar whose connections come
// from the given loopback source address (127.0.0.0/8 is all local), so a
// test can act as several client IPs.
func ownerClient(t *testing.T, source string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
	return &http.Client{
		Jar:       jar,
		Timeout:   30 * time.Second,
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil},
	}
}

// ownerDo sends a JSON request with the client and optional headers.
func (ts *testServer) ownerDo(t *testing.T, c *http.Client, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, r)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func errCode(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e.Error.Code
}

// TestREADMEPathCreateOwnerIssueKeyCallAdminAPI is the newcomer's path
// through the real CLI: create an owner, issue a key, call the admin API
// with it.
func TestREADMEPathCreateOwnerIssueKeyCallAdminAPI(t *testing.T) {
	dbURL := testdb.NewURL(t)
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("STANDMEET_MASTER_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	t.Setenv("STANDMEET_MASTER_KEY_FILE", "")
	t.Setenv("STANDMEET_LOG", "json")

	var out, errOut strings.Builder
	code := run([]string{"owner", "create", "--email", "Newcomer@example.com", "--password-stdin"},
		strings.NewReader("my own long passphrase\n"), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	require.Contains(t, out.String(), "created owner Newcomer@example.com")
	require.NotContains(t, out.String(), "my own long passphrase")

	out.Reset()
	code = run([]string{"api-key", "issue", "--email", "newcomer@example.com", "--name", "laptop"}, nil, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	key := out.String()
	require.Regexp(t, `^smk_[A-Za-z0-9_-]{43}\n$`, key, "only the key, once, on stdout")
	key = strings.TrimSpace(key)

	// Without --password-stdin the password is generated and printed once.
	out.Reset()
	code = run([]string{"owner", "create", "--email", "second@example.com"}, nil, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	generated := strings.TrimPrefix(strings.Split(strings.TrimSpace(out.String()), "\n")[1], "password: ")
	require.GreaterOrEqual(t, len(generated), 20)

	// Mistakes exit non-zero with a message and print nothing on stdout.
	for _, args := range [][]string{
		{"owner", "create", "--email", "newcomer@EXAMPLE.com", "--password-stdin"},
		{"owner", "create"},
		{"api-key", "issue", "--email", "nobody@example.com", "--name", "x"},
		{"api-key", "issue", "--email", "newcomer@example.com"},
	} {
		out.Reset()
		errOut.Reset()
		code := run(args, strings.NewReader("another long passphrase\n"), &out, &errOut)
		require.NotZero(t, code, args)
		require.Empty(t, out.String(), args)
		require.NotEmpty(t, errOut.String(), args)
	}

	ts := startTestServer(t, testServerOptions{DBURL: dbURL})
	status, body := ts.do(t, http.MethodGet, "/api/admin/me", key, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"email":"Newcomer@example.com"`)
	status, body = ts.do(t, http.MethodGet, "/api/admin/api-keys", key, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"name":"laptop"`)
	require.Contains(t, body, `"prefix":"`+key[:12]+`"`)
	require.NotContains(t, body, key)

	c := ownerClient(t, "127.0.0.1")
	status, body = ts.ownerDo(t, c, http.MethodPost, "/api/auth/login", `{"email":"second@example.com","password":"`+generated+`"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
}

// TestServeWithoutOwnerSaysHowToCreateOne: the first start of an instance
// without owner logs the command to run.
func TestServeWithoutOwnerSaysHowToCreateOne(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	require.Eventually(t, func() bool {
		return ts.Logs.FilterMessageSnippet("standmeet owner create --email").Len() == 1
	}, 10*time.Second, 10*time.Millisecond)
}

// TestSessionLoginCSRFAndLogout drives the cookie flow over real HTTP.
func TestSessionLoginCSRFAndLogout(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	c := ownerClient(t, "127.0.0.1")

	status, body := ts.ownerDo(t, c, http.MethodPost, "/api/auth/login", `{"email":"`+o.Email+`","password":"`+o.Password+`"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	var login auth.LoginResponse
	require.NoError(t, json.Unmarshal([]byte(body), &login))
	require.Equal(t, o.ID, login.Owner.ID)

	status, body = ts.ownerDo(t, c, http.MethodGet, "/api/admin/me", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = ts.ownerDo(t, c, http.MethodPost, "/api/admin/api-keys", `{"name":"from the browser"}`, nil)
	require.Equal(t, http.StatusForbidden, status, body)
	require.Equal(t, auth.CodeCSRF, errCode(t, body))
	status, body = ts.ownerDo(t, c, http.MethodPost, "/api/admin/api-keys", `{"name":"from the browser"}`, map[string]string{auth.CSRFHeader: login.CSRFToken})
	require.Equal(t, http.StatusCreated, status, body)

	status, body = ts.ownerDo(t, c, http.MethodPost, "/api/auth/logout", "", map[string]string{auth.CSRFHeader: login.CSRFToken})
	require.Equal(t, http.StatusNoContent, status, body)
	status, body = ts.ownerDo(t, c, http.MethodGet, "/api/admin/me", "", nil)
	require.Equal(t, http.StatusUnauthorized, status, body)

	var n int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2`, o.ID, domain.EventOwnerLogin).Scan(&n))
	require.Equal(t, 1, n, "owner.login recorded once")
}

// TestBruteForceGetsTheIPBanned: failed logins from one address are limited
// (429), then the address is banned (ip_ban.added), after which it gets 403
// on every route; the owner lists and lifts the ban from elsewhere.
func TestBruteForceGetsTheIPBanned(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	attacker := ownerClient(t, "127.0.0.2")
	lim := ts.App.Commands.Owners.Limits()

	wrong := `{"email":"` + o.Email + `","password":"not the password"}`
	var statuses []int
	for i := 0; i < lim.BanAfter; i++ {
		status, _ := ts.ownerDo(t, attacker, http.MethodPost, "/api/auth/login", wrong, nil)
		statuses = append(statuses, status)
	}
	require.Equal(t, http.StatusUnauthorized, statuses[0])
	require.Equal(t, http.StatusTooManyRequests, statuses[len(statuses)-1])

	for _, path := range []string{"/healthz", "/api/admin/me", "/api/auth/login"} {
		status, body := ts.ownerDo(t, attacker, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusForbidden, status, path)
		require.Equal(t, "IP_BANNED", errCode(t, body))
	}
	status, body := ts.ownerDo(t, attacker, http.MethodPost, "/api/auth/login", `{"email":"`+o.Email+`","password":"`+o.Password+`"}`, nil)
	require.Equal(t, http.StatusForbidden, status, "not even the right password gets through: %s", body)

	var banEvents int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2 AND data->>'ip' = '127.0.0.2'`, o.ID, domain.EventIPBanAdded).Scan(&banEvents))
	require.Equal(t, 1, banEvents, "ip_ban.added recorded for the targeted owner")

	// The owner, from another address, sees the ban and lifts it.
	status, body = ts.do(t, http.MethodGet, "/api/admin/ip-bans", o.Key, "")
	require.Equal(t, http.StatusOK, status, body)
	var bans struct {
		Data []struct {
			ID uuid.UUID `json:"id"`
			IP string    `json:"ip"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &bans))
	require.Len(t, bans.Data, 1)
	require.Equal(t, "127.0.0.2", bans.Data[0].IP)
	_, otherKey := ts.newOwner(t)
	status, body = ts.do(t, http.MethodGet, "/api/admin/ip-bans", otherKey, "")
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, "127.0.0.2", "another owner's account was not attacked")
	status, body = ts.do(t, http.MethodDelete, "/api/admin/ip-bans/"+bans.Data[0].ID.String(), otherKey, "")
	require.Equal(t, http.StatusNotFound, status, body)
	status, body = ts.do(t, http.MethodDelete, "/api/admin/ip-bans/"+bans.Data[0].ID.String(), o.Key, "")
	require.Equal(t, http.StatusNoContent, status, body)

	status, body = ts.ownerDo(t, attacker, http.MethodPost, "/api/auth/login", `{"email":"`+o.Email+`","password":"`+o.Password+`"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
}

// TestPasswordsAndAPIKeysNeverReachTheLogs captures every log entry of the
// server (zap observer) while an owner logs in (wrongly and rightly), issues
// keys over HTTP and the CLI, and uses them; neither secret may occur in any
// message or field.
func TestPasswordsAndAPIKeysNeverReachTheLogs(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	c := ownerClient(t, "127.0.0.1")
	secrets := []string{o.Password, o.Key}

	for _, pw := range []string{"wrong " + o.Password, o.Password} {
		ts.ownerDo(t, c, http.MethodPost, "/api/auth/login", `{"email":"`+o.Email+`","password":"`+pw+`"}`, nil)
		secrets = append(secrets, pw)
	}
	status, body := ts.do(t, http.MethodPost, "/api/admin/api-keys", o.Key, `{"name":"logged?"}`)
	require.Equal(t, http.StatusCreated, status, body)
	var issued struct {
		Key string `json:"key"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &issued))
	secrets = append(secrets, issued.Key)
	status, _ = ts.do(t, http.MethodGet, "/api/admin/me", issued.Key, "")
	require.Equal(t, http.StatusOK, status)
	ts.do(t, http.MethodGet, "/api/admin/me", issued.Key+"tampered", "")

	var out, errOut strings.Builder
	code, err := ts.App.Commands.Run(context.Background(), ts.App, []string{"api-key", "issue", "--email", o.Email, "--name", "cli"}, nil, &out, &errOut)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	secrets = append(secrets, strings.TrimSpace(out.String()))
	code, err = ts.App.Commands.Run(context.Background(), ts.App, []string{"owner", "create", "--email", "x-" + o.Email, "--password-stdin"},
		strings.NewReader("a stdin passphrase\n"), &out, &errOut)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	secrets = append(secrets, "a stdin passphrase")

	entries := ts.Logs.All()
	require.NotEmpty(t, entries, "the requests were logged")
	for _, e := range entries {
		fields, err := json.Marshal(e.ContextMap())
		require.NoError(t, err)
		line := e.Message + " " + e.LoggerName + " " + string(fields)
		for _, s := range secrets {
			require.NotContains(t, line, s)
		}
	}
}

// --- owner isolation ---------------------------------------------------

// isolationFixture is what the rows of the isolation table build on: owner
// A, whose rows B must not reach, and owner B.
type isolationFixture struct {
	ts   *testServer
	A, B testOwner
}

// isolationTarget is one request of the isolation test.
type isolationTarget struct {
	// Path is the concrete path, with A's ids filled in where the route is
	// row-scoped.
	Path string
	// Body is sent as JSON ("" = none).
	Body string
	// Hidden are strings of A's (ids, names) that must not occur in B's
	// answer and must occur in A's (when WantA is 200), so the check proves
	// something.
	Hidden []string
}

// isolationRow says how to call one /api/admin route as owner B against
// owner A's data.
type isolationRow struct {
	// Target builds A's row if needed and returns the request.
	Target func(t *testing.T, fx *isolationFixture) isolationTarget
	// WantB is B's status: 404 for a row-scoped route on A's row, 403 where
	// the route is not row-scoped but B may not act on A's behalf, 2xx for
	// routes that only ever show or change the caller's own data.
	WantB int
	// WantA, when set, is A's status for the same request, sent after B's
	// (so a destructive request proves its path was right).
	WantA int
	// After, when set, checks that A's data survived B's request.
	After func(t *testing.T, fx *isolationFixture, target isolationTarget)
}

// createdForB is the After check of a route that creates a row of the
// caller's own: the rows of table whose column is value are wantB of B's
// and none of A's.
func createdForB(table, column, value string, wantB int) func(*testing.T, *isolationFixture, isolationTarget) {
	return func(t *testing.T, fx *isolationFixture, _ isolationTarget) {
		t.Helper()
		var a, b int
		require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FILTER (WHERE owner_id = $2), count(*) FILTER (WHERE owner_id = $3) FROM `+table+` WHERE `+column+` = $1`,
			value, fx.A.ID, fx.B.ID).Scan(&a, &b))
		require.Zero(t, a, "B's request stored a row of %s for A", table)
		require.Equal(t, wantB, b, "B's rows of %s", table)
	}
}

// isolationTables lists every part's rows, keyed "METHOD /echo/path/:param"
// as Echo lists its routes. A part that adds /api/admin routes adds its
// rows in its own e2e file, as a func returning a map, and lists that func
// here.
var isolationTables = []func() map[string]isolationRow{
	ownerIsolationRows,
	eventsIsolationRows,
	corpusIsolationRows,
	accessIsolationRows,
	webhooksIsolationRows,
	inboundIsolationRows,
	publishIsolationRows,
	jobsIsolationRows,
	healthIsolationRows,
}

func mergeIsolationRows(t *testing.T) map[string]isolationRow {
	t.Helper()
	all := map[string]isolationRow{}
	for _, table := range isolationTables {
		for k, v := range table() {
			_, dup := all[k]
			require.False(t, dup, "two isolation rows for %s", k)
			all[k] = v
		}
	}
	return all
}

// isolationAdminRoutes returns "METHOD path" of every route the server registered
// under /api/admin.
func isolationAdminRoutes(ts *testServer) []string {
	return routesUnder(ts, "/api/admin", nil)
}

// routesUnder returns "METHOD path" of every route the server registered
// at prefix or below it, sorted, but the paths skip names.
func routesUnder(ts *testServer, prefix string, skip map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range ts.App.Server.Echo().Routes() {
		if r.Path != prefix && !strings.HasPrefix(r.Path, prefix+"/") {
			continue
		}
		if r.Method == "echo_route_not_found" || skip[r.Path] != "" {
			continue
		}
		k := r.Method + " " + r.Path
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestOwnerIsolationOnEveryAdminRoute: for every /api/admin route that
// exists, no credentials get 401 and owner B's key never reaches owner A's
// rows. A route without a row in the table fails the test.
func TestOwnerIsolationOnEveryAdminRoute(t *testing.T) {
	t.Parallel()
	// The webhook rows register loopback discard-port endpoints, which
	// registration refuses unless the policy allows them.
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.1/32"}})
	fx := &isolationFixture{ts: ts, A: ts.newOwnerAccount(t), B: ts.newOwnerAccount(t)}
	rows := mergeIsolationRows(t)
	routes := isolationAdminRoutes(ts)
	require.NotEmpty(t, routes)

	for k := range rows {
		require.Contains(t, routes, k, "stale isolation row: the route no longer exists")
	}

	for _, key := range routes {
		row, ok := rows[key]
		method := strings.Fields(key)[0]
		t.Run(key, func(t *testing.T) {
			require.True(t, ok, "no row for %s in the owner isolation table: add one (cmd/server/e2e_owner_test.go, isolationTables)", key)
			target := row.Target(t, fx)
			require.True(t, len(target.Hidden) > 0 || row.After != nil || row.WantA != 0,
				"the row for %s checks nothing of A's: give it Hidden (A's ids or names that B's answer must not hold), an After check of A's data, or WantA (A's request after B's)", key)
			status, body := ts.do(t, method, target.Path, "", target.Body)
			require.Equal(t, http.StatusUnauthorized, status, "no credentials: %s", body)
			status, body = ts.do(t, method, target.Path, "smk_"+strings.Repeat("x", 43), target.Body)
			require.Equal(t, http.StatusUnauthorized, status, "a made-up key: %s", body)

			status, body = ts.do(t, method, target.Path, fx.B.Key, target.Body)
			require.Equal(t, row.WantB, status, "owner B: %s", body)
			for _, h := range target.Hidden {
				require.NotContains(t, body, h, "owner B sees A's data")
			}
			if row.After != nil {
				row.After(t, fx, target)
			}
			if row.WantA != 0 {
				status, body = ts.do(t, method, target.Path, fx.A.Key, target.Body)
				require.Equal(t, row.WantA, status, "owner A: %s", body)
				if row.WantA == http.StatusOK {
					for _, h := range target.Hidden {
						require.Contains(t, body, h, "the fixture must show A's data to A")
					}
				}
			}
		})
	}
}

// issueKeyForA issues a fresh key to A and returns it.
func (fx *isolationFixture) issueKeyForA(t *testing.T, name string) (id uuid.UUID, key string) {
	t.Helper()
	k, err := fx.ts.App.Commands.Owners.IssueAPIKey(context.Background(), fx.A.ID, name)
	require.NoError(t, err)
	return k.ID, k.Key
}

// sessionOfA signs A in (a session row, as a browser's) and returns its id.
func (fx *isolationFixture) sessionOfA(t *testing.T) uuid.UUID {
	t.Helper()
	res, err := fx.ts.App.Commands.Owners.Login(context.Background(), owner.LoginInput{Email: fx.A.Email, Password: fx.A.Password, IP: "192.0.2.79"})
	require.NoError(t, err)
	return res.Session.ID
}

// sessionExists tells whether the session id is still there.
func (fx *isolationFixture) sessionExists(t *testing.T, id string) bool {
	t.Helper()
	var n int
	require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM owner_sessions WHERE id = $1`, id).Scan(&n))
	return n == 1
}

// banForA stores a ban of A's on a documentation address (a row only: no
// traffic comes from or goes to it). The address is the ban id's random
// bits under 2001:db8::/32, so the bans of one fixture never share an
// address (at most one open ban per owner and address).
func (fx *isolationFixture) banForA(t *testing.T) (uuid.UUID, string) {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	var a [16]byte
	a[0], a[1], a[2], a[3] = 0x20, 0x01, 0x0d, 0xb8
	copy(a[8:], id[8:])
	ip := netip.AddrFrom16(a).String()
	_, err := fx.ts.App.Pool.Exec(context.Background(), `INSERT INTO ip_bans (id, owner_id, ip, reason, created_at, expires_at)
VALUES ($1, $2, $3, 'isolation fixture', now(), now() + interval '1 hour')`, id, fx.A.ID, ip)
	require.NoError(t, err)
	return id, ip
}

// eventOfA returns the id of one of A's events (api_key.issued at creation).
func (fx *isolationFixture) eventOfA(t *testing.T, poisoned bool) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(),
		`SELECT id FROM events WHERE owner_id = $1 ORDER BY seq LIMIT 1`, fx.A.ID).Scan(&id))
	if poisoned {
		_, err := fx.ts.App.Pool.Exec(context.Background(),
			`UPDATE events SET poisoned_at = now(), relay_attempts = 5, relay_error = 'isolation fixture' WHERE id = $1`, id)
		require.NoError(t, err)
	}
	return id
}

func ownerIsolationRows() map[string]isolationRow {
	return map[string]isolationRow{
		"GET /api/admin/me": {
			Target: func(_ *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/me", Hidden: []string{fx.A.ID.String(), fx.A.Email}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/me/email": {
			// Not row-scoped: B can only change B's email, and A's password
			// does not let B do it either.
			Target: func(_ *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/me/email", Body: `{"email":"taken-over@example.test","current_password":"` + fx.A.Password + `"}`}
			},
			WantB: http.StatusForbidden,
			After: func(t *testing.T, fx *isolationFixture, _ isolationTarget) {
				o, err := fx.ts.App.Commands.Owners.Me(context.Background(), fx.A.ID)
				require.NoError(t, err)
				require.Equal(t, fx.A.Email, o.Email)
			},
		},
		"POST /api/admin/me/password": {
			// Not row-scoped: B can only change B's password, and A's
			// password does not let B do it either.
			Target: func(_ *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/me/password", Body: `{"current_password":"` + fx.A.Password + `","new_password":"taken over by B!"}`}
			},
			WantB: http.StatusForbidden,
			After: func(t *testing.T, fx *isolationFixture, _ isolationTarget) {
				_, err := fx.ts.App.Commands.Owners.Login(context.Background(), owner.LoginInput{Email: fx.A.Email, Password: fx.A.Password, IP: "192.0.2.77"})
				require.NoError(t, err, "A's password still works")
			},
		},
		"POST /api/admin/me/sessions/end": {
			// Not row-scoped: B ends B's own sessions, never A's.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				_, err := fx.ts.App.Commands.Owners.Login(context.Background(), owner.LoginInput{Email: fx.A.Email, Password: fx.A.Password, IP: "192.0.2.78"})
				require.NoError(t, err)
				return isolationTarget{Path: "/api/admin/me/sessions/end"}
			},
			WantB: http.StatusNoContent,
			After: func(t *testing.T, fx *isolationFixture, _ isolationTarget) {
				var n int
				require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM owner_sessions WHERE owner_id = $1`, fx.A.ID).Scan(&n))
				require.NotZero(t, n, "B ended A's sessions")
			},
		},
		"GET /api/admin/me/sessions": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id := fx.sessionOfA(t)
				return isolationTarget{Path: "/api/admin/me/sessions", Hidden: []string{id.String()}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"DELETE /api/admin/me/sessions/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/me/sessions/" + fx.sessionOfA(t).String()}
			},
			WantB: http.StatusNotFound, WantA: http.StatusNoContent,
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				require.True(t, fx.sessionExists(t, target.Path[strings.LastIndex(target.Path, "/")+1:]), "B ended A's session")
			},
		},
		"GET /api/admin/api-keys": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, key := fx.issueKeyForA(t, "a-listed-key")
				return isolationTarget{Path: "/api/admin/api-keys", Hidden: []string{id.String(), key[:12], "a-listed-key"}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/api-keys": {
			// Not row-scoped: the key is B's own.
			Target: func(_ *testing.T, _ *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/api-keys", Body: `{"name":"isolation-probe"}`}
			},
			WantB: http.StatusCreated,
			After: func(t *testing.T, fx *isolationFixture, _ isolationTarget) {
				keys, err := fx.ts.App.Commands.Owners.ListAPIKeys(context.Background(), fx.A.ID)
				require.NoError(t, err)
				for _, k := range keys {
					require.NotEqual(t, "isolation-probe", k.Name, "B's key landed with A")
				}
			},
		},
		"DELETE /api/admin/api-keys/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.issueKeyForA(t, "a-revocable-key")
				return isolationTarget{Path: "/api/admin/api-keys/" + id.String()}
			},
			WantB: http.StatusNotFound, WantA: http.StatusNoContent,
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				id := uuid.MustParse(target.Path[strings.LastIndex(target.Path, "/")+1:])
				keys, err := fx.ts.App.Commands.Owners.ListAPIKeys(context.Background(), fx.A.ID)
				require.NoError(t, err)
				for _, k := range keys {
					if k.ID == id {
						require.Nil(t, k.RevokedAt, "B revoked A's key")
					}
				}
			},
		},
		"GET /api/admin/ip-bans": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, ip := fx.banForA(t)
				return isolationTarget{Path: "/api/admin/ip-bans", Hidden: []string{id.String(), ip}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"DELETE /api/admin/ip-bans/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, _ := fx.banForA(t)
				return isolationTarget{Path: "/api/admin/ip-bans/" + id.String()}
			},
			WantB: http.StatusNotFound, WantA: http.StatusNoContent,
		},
		"POST /api/admin/instance/upgrade-request": {
			// Not row-scoped: the request is recorded for B.
			Target: func(_ *testing.T, _ *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/instance/upgrade-request", Body: `{"note":"isolation"}`}
			},
			WantB: http.StatusAccepted,
			After: func(t *testing.T, fx *isolationFixture, _ isolationTarget) {
				var n int
				require.NoError(t, fx.ts.App.Pool.QueryRow(context.Background(),
					`SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2`, fx.A.ID, domain.EventInstanceUpgradeRequested).Scan(&n))
				require.Zero(t, n)
			},
		},
	}
}

// eventsIsolationRows covers the event bus's admin ops
// (internal/adapters/eventop).
func eventsIsolationRows() map[string]isolationRow {
	return map[string]isolationRow{
		"GET /api/admin/events": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/events", Hidden: []string{fx.eventOfA(t, false).String()}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"GET /api/admin/events/poisoned": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/events/poisoned", Hidden: []string{fx.eventOfA(t, true).String()}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"GET /api/admin/events/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/events/" + fx.eventOfA(t, false).String()}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/events/:id/release": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/events/" + fx.eventOfA(t, true).String() + "/release"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
	}
}

// TestOwnerHintOnlyWithoutOwner: the hint is logged when, and only when,
// the instance has no owner.
func TestOwnerHintOnlyWithoutOwner(t *testing.T) {
	t.Parallel()
	for _, withOwner := range []bool{false, true} {
		svc, err := owner.New(owner.Deps{UoW: ownertest.NewMemory(), Hasher: auth.NewArgon2id(argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}), Tokens: auth.RandomTokens{}})
		require.NoError(t, err)
		if withOwner {
			_, err := svc.CreateOwner(context.Background(), "o@example.com", "a long enough password")
			require.NoError(t, err)
		}
		core, logs := observer.New(zapcore.InfoLevel)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Run checks first, then returns at once.
		require.NoError(t, (&ownerHint{svc: svc, logger: zap.New(core)}).Run(ctx))
		require.Equal(t, !withOwner, logs.FilterMessageSnippet("standmeet owner create").Len() == 1, "with owner: %v", withOwner)
	}
}

// createAsA posts body to path with A's key, requires 201 and returns the
// new row's id.
func (fx *isolationFixture) createAsA(t *testing.T, path, body string) string {
	t.Helper()
	status, resp := fx.ts.do(t, http.MethodPost, path, fx.A.Key, body)
	require.Equal(t, http.StatusCreated, status, resp)
	var row struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &row))
	require.NotEmpty(t, row.ID, resp)
	return row.ID
}

// endpointOfA and webhooksIsolationRows live in e2e_webhooks_isolation_test.go.

// sourceOfA creates an inbound source of A's.
func (fx *isolationFixture) sourceOfA(t *testing.T) string {
	t.Helper()
	return fx.createAsA(t, "/api/admin/inbound-sources", `{"name":"a-source","verifier":"standard-webhooks"}`)
}

// deadLetterOfA stores a dead inbox message in A's source (a row only).
func (fx *isolationFixture) deadLetterOfA(t *testing.T, sourceID string) string {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	_, err := fx.ts.App.Pool.Exec(context.Background(), `INSERT INTO inbound_messages
    (id, owner_id, source_id, message_id, message_id_signed, payload_sha256, body, received_at, state, attempts, last_error, dead_at)
VALUES ($1, $2, $3, $4, true, sha256('{}'::bytea), '{}'::bytea, now(), 'dead', 5, 'isolation fixture', now())`,
		id, fx.A.ID, sourceID, "msg_"+id.String())
	require.NoError(t, err)
	return id.String()
}

// inboundIsolationRows covers inbound sources, their inboxes and supplier
// connections (internal/owner/inbound).
func inboundIsolationRows() map[string]isolationRow {
	sourcePath := func(suffix string) func(*testing.T, *isolationFixture) isolationTarget {
		return func(t *testing.T, fx *isolationFixture) isolationTarget {
			return isolationTarget{Path: "/api/admin/inbound-sources/" + fx.sourceOfA(t) + suffix}
		}
	}
	messagePath := func(suffix string) func(*testing.T, *isolationFixture) isolationTarget {
		return func(t *testing.T, fx *isolationFixture) isolationTarget {
			src := fx.sourceOfA(t)
			return isolationTarget{Path: "/api/admin/inbound-sources/" + src + "/messages/" + fx.deadLetterOfA(t, src) + suffix}
		}
	}
	connectionOfA := func(t *testing.T, fx *isolationFixture) string {
		return fx.createAsA(t, "/api/admin/supplier-connections", `{"name":"a-connection","source_id":"`+fx.sourceOfA(t)+`"}`)
	}
	return map[string]isolationRow{
		"GET /api/admin/inbound-sources": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/inbound-sources", Hidden: []string{fx.sourceOfA(t)}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/inbound-sources": {
			// Not row-scoped: the source is B's own.
			Target: func(*testing.T, *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/inbound-sources", Body: `{"name":"b-source","verifier":"standard-webhooks"}`}
			},
			WantB: http.StatusCreated,
			After: createdForB("inbound_sources", "name", "b-source", 1),
		},
		"GET /api/admin/inbound-sources/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id := fx.sourceOfA(t)
				return isolationTarget{Path: "/api/admin/inbound-sources/" + id, Hidden: []string{id, "a-source"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"PATCH /api/admin/inbound-sources/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/inbound-sources/" + fx.sourceOfA(t), Body: `{"name":"renamed"}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"DELETE /api/admin/inbound-sources/:id": {
			Target: sourcePath(""), WantB: http.StatusNotFound, WantA: http.StatusNoContent,
		},
		"POST /api/admin/inbound-sources/:id/rotate-secret": {
			Target: sourcePath("/rotate-secret"), WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/inbound-sources/:id/messages": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				src := fx.sourceOfA(t)
				return isolationTarget{Path: "/api/admin/inbound-sources/" + src + "/messages", Hidden: []string{fx.deadLetterOfA(t, src)}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/inbound-sources/:id/messages/:message_id": {
			Target: messagePath(""), WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/inbound-sources/:id/refusals": {
			Target: sourcePath("/refusals"), WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/inbound-sources/:id/dead-letters": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				src := fx.sourceOfA(t)
				return isolationTarget{Path: "/api/admin/inbound-sources/" + src + "/dead-letters", Hidden: []string{fx.deadLetterOfA(t, src)}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/inbound-sources/:id/dead-letters/:message_id/replay": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				src := fx.sourceOfA(t)
				return isolationTarget{Path: "/api/admin/inbound-sources/" + src + "/dead-letters/" + fx.deadLetterOfA(t, src) + "/replay"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/inbound-sources/:id/dead-letters/replay": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				src := fx.sourceOfA(t)
				fx.deadLetterOfA(t, src)
				return isolationTarget{Path: "/api/admin/inbound-sources/" + src + "/dead-letters/replay"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/supplier-connections": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/supplier-connections", Hidden: []string{connectionOfA(t, fx)}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"POST /api/admin/supplier-connections": {
			// B may not connect a supplier through A's source.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/supplier-connections", Body: `{"name":"b-connection","source_id":"` + fx.sourceOfA(t) + `"}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusCreated,
		},
		"GET /api/admin/supplier-connections/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id := connectionOfA(t, fx)
				return isolationTarget{Path: "/api/admin/supplier-connections/" + id, Hidden: []string{id, "a-connection"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"DELETE /api/admin/supplier-connections/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/supplier-connections/" + connectionOfA(t, fx)}
			},
			WantB: http.StatusNotFound, WantA: http.StatusNoContent,
		},
	}
}

// TestBehindATrustedProxyTheForwardedClientIsBanned: with
// STANDMEET_TRUSTED_PROXIES naming the proxy, brute force arriving through
// it bans the address the proxy forwarded, not the proxy, so the other
// clients behind it still get through; without the setting the header is
// ignored (TestBruteForceGetsTheIPBanned bans the peer).
func TestBehindATrustedProxyTheForwardedClientIsBanned(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_TRUSTED_PROXIES": "127.0.0.3"}})
	o := ts.newOwnerAccount(t)
	proxy := ownerClient(t, "127.0.0.3")
	const attacker = "198.51.100.7"
	forwarded := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": ip} }
	lim := ts.App.Commands.Owners.Limits()
	wrong := `{"email":"` + o.Email + `","password":"not the password"}`
	for i := 0; i < lim.BanAfter; i++ {
		ts.ownerDo(t, proxy, http.MethodPost, "/api/auth/login", wrong, forwarded(attacker))
	}
	status, body := ts.ownerDo(t, proxy, http.MethodGet, "/healthz", "", forwarded(attacker))
	require.Equal(t, http.StatusForbidden, status, body)
	require.Equal(t, "IP_BANNED", errCode(t, body))

	status, body = ts.ownerDo(t, proxy, http.MethodPost, "/api/auth/login",
		`{"email":"`+o.Email+`","password":"`+o.Password+`"}`, forwarded("198.51.100.8"))
	require.Equal(t, http.StatusOK, status, "another client behind the proxy logs in: %s", body)
	var ip string
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
		`SELECT data->>'ip' FROM events WHERE owner_id = $1 AND type = $2`, o.ID, domain.EventIPBanAdded).Scan(&ip))
	require.Equal(t, attacker, ip, "the forwarded client is banned, not the proxy")
}

// TestStrangerCannotLockTheOwnerOut: a stranger's failed sign-ins for the
// owner's account, from one address until it is limited and then banned,
// do not stop the owner signing in from another address, nor their API key.
func TestStrangerCannotLockTheOwnerOut(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	stranger := ownerClient(t, "127.0.0.2")
	lim := ts.App.Commands.Owners.Limits()
	wrong := `{"email":"` + o.Email + `","password":"not the password"}`
	right := `{"email":"` + o.Email + `","password":"` + o.Password + `"}`

	signIn := func() {
		t.Helper()
		status, body := ts.ownerDo(t, ownerClient(t, "127.0.0.3"), http.MethodPost, "/api/auth/login", right, nil)
		require.Equal(t, http.StatusOK, status, "the owner, from their own address: %s", body)
		status, body = ts.do(t, http.MethodGet, "/api/admin/me", o.Key, "")
		require.Equal(t, http.StatusOK, status, "the owner's API key: %s", body)
	}
	for i := 0; i < lim.MaxFailuresPerAccountIP; i++ {
		status, body := ts.ownerDo(t, stranger, http.MethodPost, "/api/auth/login", wrong, nil)
		require.Equal(t, http.StatusUnauthorized, status, body)
	}
	status, body := ts.ownerDo(t, stranger, http.MethodPost, "/api/auth/login", right, nil)
	require.Equal(t, http.StatusTooManyRequests, status, "the stranger's address is limited for the account: %s", body)
	signIn()

	// Kept up to the ban: still only the stranger's address is refused.
	for i := lim.MaxFailuresPerAccountIP + 1; i < lim.BanAfter; i++ {
		ts.ownerDo(t, stranger, http.MethodPost, "/api/auth/login", wrong, nil)
	}
	status, body = ts.ownerDo(t, stranger, http.MethodGet, "/healthz", "", nil)
	require.Equal(t, http.StatusForbidden, status, body)
	require.Equal(t, "IP_BANNED", errCode(t, body))
	signIn()
}
