package main

// The Access pages' rows of the admin UI isolation table: owner B's session
// against owner A's roles, codes, embeds and access requests.

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// accessOfA is A's access fixture: a role, a code of it, an embed of the
// code and a pending access request, made once per fixture.
type accessOfA struct {
	role, code, embed, request string
}

var accessFixtures sync.Map // *isolationFixture → *accessOfA

func (fx *isolationFixture) accessOfA(t *testing.T) *accessOfA {
	t.Helper()
	if a, ok := accessFixtures.Load(fx); ok {
		return a.(*accessOfA)
	}
	a := &accessOfA{}
	a.role = fx.createAsA(t, "/api/admin/roles", `{"name":"a-ui-role","uri_globs":["wiki://*"]}`)
	a.code = fx.createAsA(t, "/api/admin/codes", `{"role_id":"`+a.role+`","label":"a-ui-code"}`)
	a.embed = fx.createAsA(t, "/api/admin/embeds", `{"code_id":"`+a.code+`","name":"a-ui-embed"}`)
	a.request = fx.createAsA(t, "/api/access-requests?owner="+fx.A.ID.String(), `{"name":"a-ui-requester","email":"req@example.com"}`)
	actual, _ := accessFixtures.LoadOrStore(fx, a)
	return actual.(*accessOfA)
}

// accessStateOfA is what B's requests must leave as it was.
func (fx *isolationFixture) accessStateOfA(t *testing.T) string {
	t.Helper()
	a := fx.accessOfA(t)
	var b strings.Builder
	for _, p := range []string{"/api/admin/roles", "/api/admin/codes/" + a.code, "/api/admin/embeds", "/api/admin/access-requests?status=pending"} {
		status, body := fx.ts.do(t, http.MethodGet, p, fx.A.Key, "")
		require.Equal(t, http.StatusOK, status, body)
		b.WriteString(body)
	}
	return b.String()
}

var accessSnapshots sync.Map // *isolationFixture → string

// accessRow targets one of A's access rows and, for posts, requires that
// A's access state is unchanged afterwards.
func accessRow(wantB int, path func(a *accessOfA) string, form url.Values) uiRow {
	return uiRow{
		Target: func(t *testing.T, fx *isolationFixture) uiTarget {
			a := fx.accessOfA(t)
			if _, ok := accessSnapshots.Load(fx); !ok {
				accessSnapshots.LoadOrStore(fx, fx.accessStateOfA(t))
			}
			f := url.Values{}
			for k, v := range form {
				f[k] = append([]string(nil), v...)
				for i := range f[k] {
					f[k][i] = strings.NewReplacer("{role}", a.role, "{code}", a.code).Replace(f[k][i])
				}
			}
			return uiTarget{Path: path(a), Form: f, Hidden: []string{"a-ui-role", "a-ui-code", "a-ui-embed", "a-ui-requester"}}
		},
		WantB: wantB,
		After: func(t *testing.T, fx *isolationFixture, _ uiTarget) {
			before, _ := accessSnapshots.Load(fx)
			require.Equal(t, before, fx.accessStateOfA(t), "B changed A's access rows")
		},
	}
}

// accessUIIsolationRows are the Access pages' rows.
func accessUIIsolationRows() map[string]uiRow {
	fixed := func(p string) func(*accessOfA) string { return func(*accessOfA) string { return p } }
	return map[string]uiRow{
		"GET /admin/access":                   accessRow(http.StatusSeeOther, fixed("/admin/access"), nil),
		"GET /admin/access/roles":             accessRow(http.StatusOK, fixed("/admin/access/roles"), nil),
		"POST /admin/access/roles":            accessRow(http.StatusSeeOther, fixed("/admin/access/roles"), url.Values{"name": {"b-role"}, "uri_globs": {"wiki://*"}}),
		"GET /admin/access/roles/:id":         accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/roles/" + a.role }, nil),
		"POST /admin/access/roles/:id":        accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/roles/" + a.role }, url.Values{"name": {"b-renamed"}, "uri_globs": {"*"}}),
		"POST /admin/access/roles/:id/delete": accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/roles/" + a.role + "/delete" }, nil),
		"GET /admin/access/codes":             accessRow(http.StatusOK, fixed("/admin/access/codes"), nil),
		// B may not issue a code of A's role: the form answers the refusal.
		"POST /admin/access/codes":                accessRow(http.StatusUnprocessableEntity, fixed("/admin/access/codes"), url.Values{"role_id": {"{role}"}, "label": {"b-code"}}),
		"GET /admin/access/codes/:id":             accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/codes/" + a.code }, nil),
		"POST /admin/access/codes/:id/check":      accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/codes/" + a.code + "/check" }, url.Values{"uri": {"wiki://a"}}),
		"POST /admin/access/codes/:id/revoke":     accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/codes/" + a.code + "/revoke" }, nil),
		"GET /admin/access/embeds":                accessRow(http.StatusOK, fixed("/admin/access/embeds"), nil),
		"POST /admin/access/embeds":               accessRow(http.StatusUnprocessableEntity, fixed("/admin/access/embeds"), url.Values{"code_id": {"{code}"}, "name": {"b-embed"}}),
		"GET /admin/access/embeds/:id":            accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/embeds/" + a.embed }, nil),
		"POST /admin/access/embeds/:id/delete":    accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/embeds/" + a.embed + "/delete" }, nil),
		"GET /admin/access/requests":              accessRow(http.StatusOK, fixed("/admin/access/requests?status=all"), nil),
		"POST /admin/access/requests/:id/approve": accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/requests/" + a.request + "/approve" }, url.Values{"role_id": {"{role}"}}),
		"POST /admin/access/requests/:id/reject":  accessRow(http.StatusNotFound, func(a *accessOfA) string { return "/admin/access/requests/" + a.request + "/reject" }, nil),
	}
}
