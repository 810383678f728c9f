package main

// webhook-event-types: every one of the declared types reaches
// an endpoint subscribed to "*", verified with the independent Standard
// Webhooks verifier, with data that matches the type's declared schema. The
// types this server produces are driven through their real actions; the
// external ones are published through events.publish with the catalog's
// example. The catalog's producer kinds are checked against the code: a type
// produced inside must have a producer in the sources and a driver here, an
// external one must have no producer in the sources (a domain that takes a
// type over declares it in the catalog, and the publish API then refuses it).

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
				strings.Contains(path, "/internal/owner/webhook/delivery/"), strings.Contains(path, "test/"),
				strings.Contains(path, "/internal/bench/"),
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

// eventDriver performs, as the owner whose API key it gets, the real action
// that records one event type.
type eventDriver func(t *testing.T, ts *testServer, key string)

// domainEventDrivers are the drivers of domains that keep their e2e test in
// a file of their own (e2e_<domain>_test.go registers its drivers from
// init), keyed by the one type each produces; TestWebhookEventTypes runs
// them beside its own.
var domainEventDrivers = map[string]eventDriver{}

// webhookTypesDeclared is the number of webhook event types the catalog
// declares: the 39 this file's drivers and the publish API cover, and one
// per domain driver.
func webhookTypesDeclared() int { return 39 + len(domainEventDrivers) }

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
	for name, drive := range domainEventDrivers {
		require.NotContains(t, drivers, name, "two drivers for %s", name)
		drivers[name] = func() { drive(t, ts, key) }
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
	var missing, noProducer, producedExternal, external []string
	for _, et := range domain.WebhookEventTypes() {
		switch {
		case et.Publishable() && produced[et.Name]:
			producedExternal = append(producedExternal, et.Name)
		case et.Publishable():
			external = append(external, et.Name)
		case !produced[et.Name]:
			noProducer = append(noProducer, et.Name)
		case !driven[et.Name]:
			missing = append(missing, et.Name)
		}
	}
	require.Empty(t, noProducer, "the catalog says these are produced inside this server, but no source produces them")
	require.Empty(t, producedExternal, "the catalog says these are external, but a source produces them: declare the producer in the catalog")
	require.Empty(t, missing, "these types have a producer but no driver in this test: add one")
	require.Len(t, external, 18)
	require.Len(t, driven, 21+len(domainEventDrivers))
	// The external types are published, as the owner's services would,
	// with the catalog's example.
	drivers["external"] = func() {
		for _, name := range external {
			et, _ := domain.LookupEventType(name)
			body, err := json.Marshal(map[string]any{"type": et.Name, "subject": et.ExampleSubject, "data": json.RawMessage(et.Example)})
			require.NoError(t, err)
			status, resp := ts.do(t, http.MethodPost, "/api/admin/events", key, string(body))
			require.Equal(t, http.StatusAccepted, status, "publish %s: %s", name, resp)
		}
	}

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
	for _, et := range domain.WebhookEventTypes() {
		want[et.Name] = true
	}
	got := map[string]bool{}
	missingNow := func() []string {
		for _, r := range rc.requests() {
			var b thinBody
			if json.Unmarshal(r.Body, &b) != nil {
				continue
			}
			if _, err := verifySW(ep.Secret, r.Header, r.Body, time.Now()); err == nil && r.Header.Get("webhook-id") == b.ID {
				et, ok := domain.LookupEventType(b.Type)
				require.True(t, ok, b.Type)
				require.NoError(t, domain.ValidateJSON(et.DataSchema, b.Data), "%s: the delivered data does not match the declared schema: %s", b.Type, b.Data)
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
	require.Empty(t, missingNow(), "types never received verified at the \"*\" endpoint")
	require.Len(t, got, webhookTypesDeclared())
	t.Logf("received verified at a \"*\" endpoint, data matching its schema: %d types (%d driven by real actions, %d published)", len(got), len(driven), len(external))
}
