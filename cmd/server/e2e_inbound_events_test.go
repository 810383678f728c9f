package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// receivedEvent is an inbound.message.received delivery as a receiver got it.
type receivedEvent struct {
	Type string `json:"type"`
	Data struct {
		SourceID     uuid.UUID `json:"source_id"`
		MessageID    uuid.UUID `json:"message_id"`
		ProviderType string    `json:"provider_type"`
		ReceivedAt   time.Time `json:"received_at"`
	} `json:"data"`
}

// inboundKind signs requests for one verifier kind.
type inboundKind struct {
	name string
	// secret is the pasted secret, empty when the instance generates it.
	secret string
	// sign builds a signed request with the delivery id, the provider's
	// event type and the body; secret is the source's secret as text.
	sign func(t *testing.T, url, secret, id, eventType string, at time.Time, body []byte) *http.Request
}

func inboundPost(t *testing.T, url string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return req
}

func hmacHex(secret string, parts ...[]byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

var inboundKinds = []inboundKind{
	{name: "standard-webhooks", sign: func(t *testing.T, url, secret, id, _ string, at time.Time, body []byte) *http.Request {
		key, err := standardwebhooks.ParseSecret(secret)
		require.NoError(t, err)
		req := inboundPost(t, url, body)
		req.Header.Set(standardwebhooks.HeaderID, id)
		req.Header.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
		req.Header.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(key, id, at, body))
		return req
	}},
	{name: "stripe", secret: "whsec_e2eStripeEndpointSecret0123", sign: func(t *testing.T, url, secret, _, _ string, at time.Time, body []byte) *http.Request {
		req := inboundPost(t, url, body)
		ts := strconv.FormatInt(at.Unix(), 10)
		req.Header.Set(verifier.HeaderStripeSignature, "t="+ts+",v1="+hmacHex(secret, []byte(ts+"."), body))
		return req
	}},
	{name: "github", secret: "e2e-github-webhook-secret", sign: func(t *testing.T, url, secret, id, eventType string, _ time.Time, body []byte) *http.Request {
		req := inboundPost(t, url, body)
		req.Header.Set(verifier.HeaderGitHubDelivery, id)
		req.Header.Set(verifier.HeaderGitHubEvent, eventType)
		req.Header.Set(verifier.HeaderGitHubSignature, "sha256="+hmacHex(secret, body))
		return req
	}},
}

// receivedEvents are the inbound.message.received deliveries rc got.
func receivedEvents(t *testing.T, rc *receiver) []receivedEvent {
	t.Helper()
	var out []receivedEvent
	for _, r := range rc.requests() {
		var e receivedEvent
		require.NoError(t, json.Unmarshal(r.Body, &e))
		if e.Type == domain.EventInboundMessageReceived {
			out = append(out, e)
		}
	}
	return out
}

// TestInboundMessageReceivedPerVerifierKind: for each verifier kind a
// verified message records exactly one inbound.message.received (its
// duplicate and a refused request none), delivered to the endpoint
// subscribed to it — through a payload filter on the provider type — with
// the provider type in data; the receiver reads the body with an API key
// scoped to inbound, which reads nothing else.
func TestInboundMessageReceivedPerVerifierKind(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	owner, key := webhookOwner(t, ts)
	receiverKey := scopedKey(t, ts, key, op.ScopeInbound)
	c := &http.Client{Timeout: 30 * time.Second}
	for _, k := range inboundKinds {
		t.Run(k.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"id":"evt_%s","type":"invoice.paid","object":"event"}`, uuid.NewString()[:8])
			create := map[string]any{"name": "e2e " + k.name, "verifier": k.name}
			if k.secret != "" {
				create["secret"] = k.secret
			}
			raw, err := json.Marshal(create)
			require.NoError(t, err)
			status, resp := ts.do(t, http.MethodPost, "/api/admin/inbound-sources", key, string(raw))
			require.Equal(t, http.StatusCreated, status, resp)
			var src inboundSource
			require.NoError(t, json.Unmarshal([]byte(resp), &src))
			secret := k.secret
			if secret == "" {
				secret = src.Secret
			}
			rc := newReceiver(t, nil)
			createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{domain.EventInboundMessageReceived},
				"filter": map[string]any{"data.source_id": map[string]any{"$eq": src.ID}, "data.provider_type": map[string]any{"$eq": "invoice.paid"}}})

			url, now := ts.URL+src.ReceiveURL, time.Now()
			status, resp = send(t, c, k.sign(t, url, secret, "msg_1", "invoice.paid", now, []byte(body)))
			require.Equal(t, http.StatusAccepted, status, resp)
			var accepted struct {
				ID uuid.UUID `json:"id"`
			}
			require.NoError(t, json.Unmarshal([]byte(resp), &accepted))
			status, resp = send(t, c, k.sign(t, url, secret, "msg_1", "invoice.paid", now, []byte(body)))
			require.Equal(t, http.StatusOK, status, "a duplicate: %s", resp)
			status, resp = send(t, c, k.sign(t, url, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_2", "invoice.paid", now, []byte(`{"id":"evt_x","type":"invoice.paid"}`)))
			require.Equal(t, http.StatusUnauthorized, status, "a forged request: %s", resp)

			require.Eventually(t, func() bool { return len(receivedEvents(t, rc)) > 0 }, 30*time.Second, 20*time.Millisecond, "no inbound.message.received delivered")
			time.Sleep(300 * time.Millisecond) // a second event would be delivered by now
			got := receivedEvents(t, rc)
			require.Len(t, got, 1, "exactly one event for the accepted message")
			require.Equal(t, src.ID, got[0].Data.SourceID.String())
			require.Equal(t, "invoice.paid", got[0].Data.ProviderType)
			require.WithinDuration(t, now, got[0].Data.ReceivedAt, 10*time.Second)
			var n int
			require.NoError(t, ts.App.Pool.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2 AND data->>'source_id' = $3`,
				owner, domain.EventInboundMessageReceived, src.ID).Scan(&n))
			require.Equal(t, 1, n, "one event recorded for the source, none for the duplicate or the forged request")

			status, resp = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/messages/"+got[0].Data.MessageID.String(), receiverKey, "")
			require.Equal(t, http.StatusOK, status, resp)
			var msg struct {
				Body string `json:"body"`
			}
			require.NoError(t, json.Unmarshal([]byte(resp), &msg))
			require.Equal(t, body, msg.Body, "the receiver reads the body with its inbound-scoped key")
			status, resp = ts.do(t, http.MethodGet, "/api/admin/webhooks", receiverKey, "")
			require.Equal(t, http.StatusForbidden, status, "the inbound key reads no endpoints: %s", resp)
			if accepted.ID != uuid.Nil {
				require.Equal(t, accepted.ID, got[0].Data.MessageID)
			}
		})
	}
}

func init() {
	// A Standard Webhooks message accepted by the gateway.
	domainEventDrivers[domain.EventInboundMessageReceived] = func(t *testing.T, ts *testServer, key string) {
		src := createInboundSource(t, ts, key, "")
		status, resp := send(t, &http.Client{Timeout: 30 * time.Second},
			hookRequest(t, ts, src, src.key, "msg_every_type", time.Now(), []byte(`{"type":"order.created"}`)))
		require.Equal(t, http.StatusAccepted, status, resp)
	}
}
