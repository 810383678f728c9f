package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAWayBackIn: before any owner exists the sign-in page says how to
// create one; it links a page that says how a locked-out owner gets back
// in; and `owner reset-password` sets a new password (printed once), ends
// the owner's sessions, and the owner signs in with it (the old password
// no longer works).
func TestAWayBackIn(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	anon := &uiClient{ts: ts, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	status, body, _ := anon.get(t, "/admin/login")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "This instance has no owner yet")
	require.Contains(t, body, "standmeet owner create --email")
	require.Contains(t, body, `href="/admin/forgot"`)
	status, body, _ = anon.get(t, "/admin/forgot")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "standmeet owner reset-password --email you@example.com")

	run := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		var out, errOut strings.Builder
		code, err := ts.App.Commands.Run(t.Context(), ts.App, args, strings.NewReader(stdin), &out, &errOut)
		require.NoError(t, err, errOut.String())
		return code, out.String(), errOut.String()
	}
	o := testOwner{Email: "back-in@example.com", Password: "the first passphrase here"}
	code, _, _ := run(o.Password+"\n", "owner", "create", "--email", o.Email, "--password-stdin")
	require.Equal(t, 0, code)
	status, body, _ = anon.get(t, "/admin/login")
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, body, "no owner yet", "an owner exists now")

	u := signIn(t, ts, o)
	status, _, _ = u.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, status)

	code, _, errOut := run("", "owner", "reset-password")
	require.Equal(t, 2, code, "the email is required")
	require.Contains(t, errOut, "usage: standmeet owner reset-password")
	_, err := ts.App.Commands.Run(t.Context(), ts.App, []string{"owner", "reset-password", "--email", "nobody@example.com"}, nil, &strings.Builder{}, &strings.Builder{})
	require.Error(t, err, "an unknown email")
	status, _, _ = u.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, status, "a refused reset ends no session")

	code, out, _ := run("", "owner", "reset-password", "--email", "Back-In@example.com")
	require.Equal(t, 0, code)
	m := regexp.MustCompile(`(?m)^password: (\S+)$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	status, _, loc := u.get(t, "/admin/account")
	require.Equal(t, http.StatusSeeOther, status, "the old session ended")
	require.Contains(t, loc, "/admin/login")

	old := o
	o.Password = m[1]
	signIn(t, ts, o)
	status, body = ts.ownerDo(t, ownerClient(t, "127.0.0.1"), http.MethodPost, "/api/auth/login",
		`{"email":"`+old.Email+`","password":"`+old.Password+`"}`, nil)
	require.Equal(t, http.StatusUnauthorized, status, "the old password no longer signs in: %s", body)
}
