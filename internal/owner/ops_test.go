package owner_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

func TestOpsAreDeclaredOnceUnderTheAdminAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ops := b.svc.Ops()
	want := map[string]string{
		"owner.me":                 "GET /api/admin/me",
		"owner.change_email":       "POST /api/admin/me/email",
		"api_keys.list":            "GET /api/admin/api-keys",
		"api_keys.issue":           "POST /api/admin/api-keys",
		"api_keys.revoke":          "DELETE /api/admin/api-keys/{id}",
		"ip_bans.list":             "GET /api/admin/ip-bans",
		"ip_bans.lift":             "DELETE /api/admin/ip-bans/{id}",
		"instance.request_upgrade": "POST /api/admin/instance/upgrade-request",
		"owner.change_password":    "POST /api/admin/me/password",
		"owner.end_sessions":       "POST /api/admin/me/sessions/end",
		"owner.sessions":           "GET /api/admin/me/sessions",
		"owner.end_session":        "DELETE /api/admin/me/sessions/{id}",
	}
	got := map[string]string{}
	for _, d := range ops {
		m := d.Meta()
		require.False(t, m.Public, m.Name)
		require.NotEmpty(t, m.Summary, m.Name)
		got[m.Name] = m.Method + " " + m.Path
		// Every input field has a json tag (MCP and REST decode by it).
		it := d.InputType()
		for i := 0; i < it.NumField(); i++ {
			f := it.Field(i)
			if !f.Anonymous {
				require.NotEmpty(t, f.Tag.Get("json"), "%s.%s", m.Name, f.Name)
			}
		}
	}
	require.Equal(t, want, got)
	d, _ := ops.Find("api_keys.issue")
	require.Equal(t, http.StatusCreated, d.Meta().SuccessStatus())
	d, _ = ops.Find("instance.request_upgrade")
	require.Equal(t, http.StatusAccepted, d.Meta().SuccessStatus())
}

func TestOpsActForTheCaller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	caller := op.Caller{OwnerID: a.ID}
	ops := b.svc.Ops()
	call := func(name string, in any) any {
		t.Helper()
		d, ok := ops.Find(name)
		require.True(t, ok, name)
		p := d.NewInput()
		if in != nil {
			raw, err := json.Marshal(in)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, p))
		}
		out, err := d.Call(ctx, caller, p)
		require.NoError(t, err, name)
		return out
	}

	issued := call("api_keys.issue", map[string]any{"name": "ci"}).(owner.IssuedAPIKeyView)
	require.True(t, strings.HasPrefix(issued.Key, owner.APIKeyPrefix))
	listed := call("api_keys.list", nil).(op.List[owner.APIKeyView])
	require.Len(t, listed.Data, 1)
	raw, err := json.Marshal(listed)
	require.NoError(t, err)
	require.NotContains(t, string(raw), issued.Key, "a listing never shows the key")
	require.NotContains(t, string(raw), "hash")

	me := call("owner.me", nil).(owner.OwnerView)
	require.Equal(t, a.ID, me.ID)
	raw, err = json.Marshal(me)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "fake$", "never the password hash")

	call("api_keys.revoke", map[string]any{"id": issued.ID})
	bans := call("ip_bans.list", nil).(op.Page[owner.IPBanView])
	require.NotNil(t, bans.Data)
	up := call("instance.request_upgrade", map[string]any{"note": "please"}).(owner.UpgradeRequest)
	require.NotZero(t, up.EventID)
	changed := call("owner.change_email", map[string]any{"email": "z@example.com", "current_password": testPassword}).(owner.OwnerView)
	require.Equal(t, "z@example.com", changed.Email)
}
