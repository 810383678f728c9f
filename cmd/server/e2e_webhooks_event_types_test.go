package main

// webhook-event-types (seed 002): for every declared event type that has a
// producing use case, drive the real action through the server's own API
// and require that an endpoint subscribed to "*" receives it, verified with
// the independent Standard Webhooks verifier. Types without a producer yet
// are printed. A type that gains a producer without a driver here fails the
// test, so the list cannot silently fall behind the code.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// producers scans the non-test sources (Go outside the catalog and the
// webhook subscriber, which consumes types, and the SQL migrations) for
// each catalogued type's constant or name, and returns the types something
// produces.
func producers(t *testing.T) map[string]bool {
	t.Helper()
	consts := map[string]string{} // type name → constant identifier
	catalog, err := os.ReadFile("../../internal/domain/catalog.go")
	require.NoError(t, err)
	for _, line := range strings.Split(string(catalog), "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.HasPrefix(strings.TrimSpace(name), "Event") {
			if v, err := strconv.Unquote(strings.TrimSpace(value)); err == nil {
				consts[v] = strings.TrimSpace(name)
			}
		}
	}
	var sources []string
	for _, root := range []string{"../../internal", "../../migrations"} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch {
			case strings.HasSuffix(path, "_test.go"), strings.Contains(path, "/internal/domain/"),
				strings.Contains(path, "/internal/owner/subscriber/"), strings.Contains(path, "test/"),
				filepath.Base(path) == "memory.go", filepath.Base(path) == "schema.sql":
				return nil
			case strings.HasSuffix(path, ".go"), strings.HasSuffix(path, ".sql"):
				b, err := os.ReadFile(path)
				sources = append(sources, string(b))
				return err
			}
			return nil
		}))
	}
	out := map[string]bool{}
	for _, et := range domain.WebhookEventTypes() {
		for _, src := range sources {
			if strings.Contains(src, `"`+et.Name+`"`) || strings.Contains(src, `'`+et.Name+`'`) ||
				(consts[et.Name] != "" && strings.Contains(src, "domain."+consts[et.Name])) {
				out[et.Name] = true
				break
			}
		}
	}
	return out
}

func TestWebhookEventTypes(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	owner := ts.newOwnerAccount(t)
	key := owner.Key
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"*"}})

	post := func(path, body string) map[string]any {
		t.Helper()
		status, resp := ts.do(t, http.MethodPost, path, key, body)
		require.Less(t, status, 300, "POST %s: %s", path, resp)
		if strings.TrimSpace(resp) == "" {
			return nil
		}
		return jsonOf(t, resp)
	}
	public := func(path, body string) map[string]any {
		t.Helper()
		status, resp := ts.do(t, http.MethodPost, path, "", body)
		require.Less(t, status, 300, "POST %s: %s", path, resp)
		return jsonOf(t, resp)
	}

	// Each driver performs the real action that produces its type.
	drivers := map[string]func(){
		domain.EventWebhookTest: func() { sendTest(t, ts, key, ep.ID) },
		domain.EventCorpusNoteChanged: func() {
			post("/api/admin/notes", `{"genre":"wiki","title":"Event types","body":"b","published":true}`)
		},
		domain.EventWritingPublished: func() {
			n := post("/api/admin/notes", `{"genre":"writing","title":"An essay","body":"b","published":true}`)
			post("/api/admin/notes/"+n["id"].(string)+"/unpublish", "")
		},
		domain.EventVaultImported: func() {
			post("/api/admin/vault/import", `{"notes":[{"genre":"wiki","title":"Imported","published":true}]}`)
		},
		domain.EventAPIKeyIssued: func() {
			k := post("/api/admin/api-keys", `{"name":"event types"}`)
			status, resp := ts.do(t, http.MethodDelete, "/api/admin/api-keys/"+k["id"].(string), key, "")
			require.Equal(t, http.StatusNoContent, status, resp)
		},
		domain.EventInstanceUpgradeRequested: func() { post("/api/admin/instance/upgrade-request", `{"note":"please"}`) },
		domain.EventOwnerLogin: func() {
			public("/api/auth/login", `{"email":"`+owner.Email+`","password":"`+owner.Password+`"}`)
		},
		domain.EventOwnerRecoveryRequested: func() { public("/api/auth/recover", `{"email":"`+owner.Email+`"}`) },
		domain.EventOwnerEmailChanged: func() {
			post("/api/admin/me/email", `{"email":"changed-`+owner.Email+`","current_password":"`+owner.Password+`"}`)
			owner.Email = "changed-" + owner.Email
		},
		domain.EventCodeIssued: func() {
			role := post("/api/admin/roles", `{"name":"event types","uri_globs":["wiki://*"]}`)
			code := post("/api/admin/codes", `{"role_id":"`+role["id"].(string)+`"}`)
			public("/api/access/redeem", `{"code":"`+code["code"].(string)+`"}`)
			post("/api/admin/codes/"+code["id"].(string)+"/revoke", "")
			ask := func(email string) string {
				return public("/api/access-requests?owner="+owner.ID.String(), `{"name":"Visitor","email":"`+email+`"}`)["id"].(string)
			}
			post("/api/admin/access-requests/"+ask("a@example.com")+"/approve", `{"role_id":"`+role["id"].(string)+`"}`)
			post("/api/admin/access-requests/"+ask("b@example.com")+"/reject", "")
		},
		domain.EventSupplierConnected: func() {
			src := post("/api/admin/inbound-sources", `{"name":"supplier","verifier":"standard-webhooks"}`)
			conn := post("/api/admin/supplier-connections", `{"name":"acme","source_id":"`+src["id"].(string)+`"}`)
			// The first verified message activates the connection.
			secret, err := standardwebhooks.ParseSecret(src["secret"].(string))
			require.NoError(t, err)
			body := []byte(`{"type":"ping"}`)
			now := time.Now()
			req, err := http.NewRequest(http.MethodPost, ts.URL+"/hooks/"+src["id"].(string), bytes.NewReader(body))
			require.NoError(t, err)
			msgID := "msg_" + uuid.NewString()
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("webhook-id", msgID)
			req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
			req.Header.Set("webhook-signature", standardwebhooks.Sign(secret, msgID, now, body))
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Less(t, resp.StatusCode, 300)
			require.Eventually(t, func() bool {
				status, resp := ts.do(t, http.MethodGet, "/api/admin/supplier-connections/"+conn["id"].(string), key, "")
				return status == http.StatusOK && strings.Contains(resp, `"active"`)
			}, 60*time.Second, 20*time.Millisecond)
			status, out := ts.do(t, http.MethodDelete, "/api/admin/supplier-connections/"+conn["id"].(string), key, "")
			require.Equal(t, http.StatusNoContent, status, out)
		},
	}
	// What each driver produces beyond its own key.
	alsoProduces := map[string][]string{
		domain.EventWritingPublished:  {domain.EventWritingUnpublished},
		domain.EventAPIKeyIssued:      {domain.EventAPIKeyRevoked},
		domain.EventCodeIssued:        {domain.EventCodeRedeemed, domain.EventCodeRevoked, domain.EventAccessRequestCreated, domain.EventAccessRequestApproved, domain.EventAccessRequestStatusChanged},
		domain.EventSupplierConnected: {domain.EventSupplierActivated, domain.EventSupplierDisconnected},
	}
	// ip_ban.added bans the test's own address, so it runs last and is
	// observed at the receiver only.
	banDriver := func() {
		for i := 0; i < 200; i++ {
			status, _ := ts.do(t, http.MethodPost, "/api/auth/login", "", `{"email":"`+owner.Email+`","password":"wrong password `+strconv.Itoa(i)+`"}`)
			if status == http.StatusForbidden {
				return
			}
		}
	}
	driven := map[string]bool{domain.EventIPBanAdded: true}
	for k, also := range alsoProduces {
		driven[k] = true
		for _, a := range also {
			driven[a] = true
		}
	}
	for k := range drivers {
		driven[k] = true
	}

	produced := producers(t)
	var missing, noProducer []string
	for _, et := range domain.WebhookEventTypes() {
		switch {
		case produced[et.Name] && !driven[et.Name]:
			missing = append(missing, et.Name)
		case !produced[et.Name]:
			noProducer = append(noProducer, et.Name)
		}
	}
	t.Logf("event types with no producer yet (%d): %s", len(noProducer), strings.Join(noProducer, ", "))
	require.Empty(t, missing, "these types have a producer but no driver in this test: add one")

	names := make([]string, 0, len(drivers))
	for k := range drivers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		drivers[k]()
	}
	banDriver()

	want := map[string]bool{}
	for name := range driven {
		if produced[name] {
			want[name] = true
		}
	}
	got := map[string]bool{}
	missingNow := func() []string {
		for _, r := range rc.requests() {
			var b thinBody
			if json.Unmarshal(r.Body, &b) != nil {
				continue
			}
			if _, err := verifySW(ep.Secret, r.Header, r.Body, time.Now()); err == nil && r.Header.Get("webhook-id") == b.ID {
				got[b.Type] = true
			}
		}
		var miss []string
		for name := range want {
			if !got[name] {
				miss = append(miss, name)
			}
		}
		sort.Strings(miss)
		return miss
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(missingNow()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.Empty(t, missingNow(), "types produced by a real action but never received verified at the \"*\" endpoint")
	t.Logf("received verified at a \"*\" endpoint (%d): %d types with a producer", len(got), len(want))
}
