package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// TestInboundStableProviderIDsMakeAReencodedResendADuplicate: for each
// verifier kind whose provider gives an event a stable id (a Standard
// Webhooks webhook-id, Stripe's evt_… in the body, GitHub's delivery GUID), a
// resend under the same id whose body was re-serialized is answered 200
// duplicate and the inbox keeps the first message alone. The generic hmac
// kind's id header is the sender's choice: the same id with another body
// stays 409 MESSAGE_ID_CONFLICT.
func TestInboundStableProviderIDsMakeAReencodedResendADuplicate(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, key := ts.newOwner(t)
	c := &http.Client{Timeout: 30 * time.Second}
	const pasted = "whsec_pasted-secret-0123456789abcdef"
	hmacOf := func(parts ...string) []byte {
		m := hmac.New(sha256.New, []byte(pasted))
		for _, p := range parts {
			m.Write([]byte(p))
		}
		return m.Sum(nil)
	}
	create := func(body string) inboundSource {
		status, resp := ts.do(t, http.MethodPost, "/api/admin/inbound-sources", key, body)
		require.Equal(t, http.StatusCreated, status, resp)
		var s inboundSource
		require.NoError(t, json.Unmarshal([]byte(resp), &s))
		return s
	}
	post := func(src inboundSource, body []byte, headers map[string]string) *http.Request {
		req, err := http.NewRequest(http.MethodPost, ts.URL+src.ReceiveURL, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		return req
	}
	now := time.Now()
	unix := strconv.FormatInt(now.Unix(), 10)
	first := []byte(`{"id":"evt_1NhQ2x","type":"invoice.paid","data":{"n":1}}`)
	// The same event as a provider's retry may serialize it: another key
	// order and white space, the same id.
	again := []byte("{\n  \"type\": \"invoice.paid\",\n  \"data\": {\"n\": 1},\n  \"id\": \"evt_1NhQ2x\"\n}")

	kinds := []struct {
		kind   string
		source string
		sign   func(src inboundSource, body []byte) *http.Request
		want   int
	}{
		{verifier.KindStandardWebhooks, `{"name":"sw","verifier":"standard-webhooks"}`, func(src inboundSource, body []byte) *http.Request {
			secret, err := standardwebhooks.ParseSecret(src.Secret)
			require.NoError(t, err)
			return hookRequest(t, ts, src, secret, "msg_stable", now, body)
		}, http.StatusOK},
		{verifier.KindStripe, `{"name":"stripe","verifier":"stripe","secret":"` + pasted + `"}`, func(src inboundSource, body []byte) *http.Request {
			return post(src, body, map[string]string{verifier.HeaderStripeSignature: "t=" + unix + ",v1=" + hex.EncodeToString(hmacOf(unix, ".", string(body)))})
		}, http.StatusOK},
		{verifier.KindGitHub, `{"name":"gh","verifier":"github","secret":"` + pasted + `"}`, func(src inboundSource, body []byte) *http.Request {
			return post(src, body, map[string]string{verifier.HeaderGitHubSignature: "sha256=" + hex.EncodeToString(hmacOf(string(body))),
				verifier.HeaderGitHubDelivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", verifier.HeaderGitHubEvent: "push"})
		}, http.StatusOK},
		{verifier.KindHMAC, `{"name":"generic","verifier":"hmac","secret":"` + pasted + `","signature_header":"X-Signature","payload":"id.timestamp.body","timestamp_header":"X-Timestamp","id_header":"X-Id"}`,
			func(src inboundSource, body []byte) *http.Request {
				return post(src, body, map[string]string{"X-Signature": hex.EncodeToString(hmacOf("m-1.", unix, ".", string(body))), "X-Timestamp": unix, "X-Id": "m-1"})
			}, http.StatusConflict},
	}
	for _, k := range kinds {
		src := create(k.source)
		status, resp := send(t, c, k.sign(src, first))
		require.Equal(t, http.StatusAccepted, status, "%s: %s", k.kind, resp)
		status, resp = send(t, c, k.sign(src, again))
		require.Equal(t, k.want, status, "%s: the re-encoded resend: %s", k.kind, resp)
		if k.want == http.StatusOK {
			require.Contains(t, resp, `"status":"duplicate"`, k.kind)
		} else {
			require.Equal(t, "MESSAGE_ID_CONFLICT", errCode(t, resp), k.kind)
			require.Equal(t, 1, ts.Logs.FilterMessage("inbound message id conflict").Len(), "the conflict is logged")
		}
		var n int
		var body []byte
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) OVER (), body FROM inbound_messages WHERE source_id = $1 LIMIT 1`, src.ID).Scan(&n, &body))
		require.Equal(t, 1, n, "%s: one message kept", k.kind)
		require.Equal(t, string(first), string(body), "%s: the first message is the one kept", k.kind)
	}
}
