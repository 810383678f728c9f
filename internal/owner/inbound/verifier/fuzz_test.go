package verifier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

var fuzzNow = time.Unix(1700000000, 0)

func fuzzMAC(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// requireOneOutcome checks that a Verify error is a domain error matching
// exactly one of the outcome sentinels, so the gateway always knows the status.
func requireOneOutcome(t *testing.T, err error) {
	t.Helper()
	require.NotNil(t, domain.AsError(err), "%T %v", err, err)
	n := 0
	for _, s := range []error{ErrUnauthorized, ErrMalformed, ErrStale, ErrMisconfigured} {
		if errors.Is(err, s) {
			n++
		}
	}
	require.Equal(t, 1, n, "%v", err)
}

func FuzzParseStripeSignature(f *testing.F) {
	for _, s := range []string{
		"t=1700000000,v1=" + strings.Repeat("ab", 32),
		"t=1,v1=x,v0=y", "t=01,v1=", "t=1,t=2", ",", "=", "t", "v1=a, t=5 ,\tv1=b",
		"t=1" + strings.Repeat(",v1=a", 11),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := parseStripeSignature(s)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		require.LessOrEqual(t, len(sh.v1), MaxSignatures)
		require.Equal(t, sh.rawTimestamp, strconv.FormatInt(sh.timestamp.Unix(), 10), "timestamp has one spelling")
		for _, sig := range sh.v1 {
			if sig != nil {
				require.Len(t, sig, sha256.Size)
			}
		}
	})
}

func FuzzParseGitHubSignature(f *testing.F) {
	for _, s := range []string{"sha256=" + strings.Repeat("0", 64), "sha1=00", "sha256=", "=", "x", "SHA256=00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := parseGitHubSignature(s)
		if err != nil {
			requireOneOutcome(t, err)
			return
		}
		if sig != nil {
			require.Len(t, sig, sha256.Size)
			require.True(t, strings.HasPrefix(s, "sha256="))
		}
	})
}

func FuzzParseHMACTimestamp(f *testing.F) {
	for _, s := range []string{"1700000000", "1700000000123", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.5+02:00", "0", "01", "+1", " 1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ts, err := parseHMACTimestamp(s, TimestampUnix); err == nil {
			require.Equal(t, s, strconv.FormatInt(ts.Unix(), 10))
		}
		if ts, err := parseHMACTimestamp(s, TimestampUnixMs); err == nil {
			require.Equal(t, s, strconv.FormatInt(ts.UnixMilli(), 10))
		}
		if _, err := parseHMACTimestamp(s, TimestampRFC3339); err == nil {
			require.Equal(t, strings.TrimSpace(s), s)
		}
	})
}

func FuzzHeader(f *testing.F) {
	f.Add("X-Sig", "x-sig", "a", "b")
	f.Add("X-Sig", "X-Other", "a", "")
	f.Fuzz(func(t *testing.T, k1, k2, v1, v2 string) {
		h := domain.Header{k1: {v1}}
		h[k2] = append(h[k2], v2)
		v, present, err := header(h, "X-Sig")
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		if present {
			require.NotEmpty(t, v)
			require.True(t, v == v1 && strings.EqualFold(k1, "X-Sig") || v == v2 && strings.EqualFold(k2, "X-Sig"))
		}
	})
}

func FuzzStandardWebhooksKind(f *testing.F) {
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := []byte("whsec_" + base64.StdEncoding.EncodeToString(key))
	v, err := StandardWebhooks().New(nil)
	require.NoError(f, err)
	f.Add("msg_1", "1700000000", "v1,abc", []byte(`{"type":"a.b"}`))
	f.Add("m.1", "01", "", []byte{})
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := domain.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
		if _, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow); err != nil {
			requireOneOutcome(t, err)
		}
		if standardwebhooks.ValidateMessageID(id) != nil {
			return
		}
		good := domain.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {"1700000000"},
			"Webhook-Signature": {"v1," + base64.StdEncoding.EncodeToString(fuzzMAC(key, id+".1700000000."+string(body)))}}
		res, err := v.Verify(Request{Headers: good, Body: body}, secret, fuzzNow)
		require.NoError(t, err)
		require.Equal(t, id, res.MessageID)
	})
}

func FuzzGitHubKind(f *testing.F) {
	secret := []byte("a GitHub webhook secret")
	v, err := GitHub().New(nil)
	require.NoError(f, err)
	f.Add("sha256=00", "d-1", "push", []byte("{}"))
	f.Fuzz(func(t *testing.T, sig, delivery, event string, body []byte) {
		h := domain.Header{"X-Hub-Signature-256": {sig}, "X-Github-Delivery": {delivery}, "X-Github-Event": {event}}
		if _, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow); err != nil {
			requireOneOutcome(t, err)
		}
		h.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(fuzzMAC(secret, string(body))))
		h.Set("X-Github-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		h.Set("X-Github-Event", "push")
		_, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow)
		require.NoError(t, err)
	})
}

func FuzzStripeKind(f *testing.F) {
	secret := []byte("whsec_0123456789abcdef0123456789")
	v, err := Stripe().New(nil)
	require.NoError(f, err)
	f.Add("t=1700000000,v1=00", []byte(`{"id":"evt_1","type":"a"}`))
	f.Fuzz(func(t *testing.T, sig string, body []byte) {
		h := domain.Header{"Stripe-Signature": {sig}}
		if _, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow); err != nil {
			requireOneOutcome(t, err)
		}
		// A correct signature always authenticates; only the body may still be refused.
		h.Set("Stripe-Signature", "t=1700000000,v1="+hex.EncodeToString(fuzzMAC(secret, "1700000000."+string(body))))
		_, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
		}
	})
}

func FuzzHMACKind(f *testing.F) {
	secret := []byte("provider-secret-0123456789")
	v, err := HMAC().New(json.RawMessage(`{"signature_header":"X-Sig","signature_prefix":"v=","payload":"id.timestamp.body","timestamp_header":"X-Ts","id_header":"X-Id"}`))
	require.NoError(f, err)
	f.Add("v=00", "1700000000", "id_1", []byte("{}"))
	f.Fuzz(func(t *testing.T, sig, ts, id string, body []byte) {
		h := domain.Header{"X-Sig": {sig}, "X-Ts": {ts}, "X-Id": {id}}
		if _, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow); err != nil {
			requireOneOutcome(t, err)
		}
		if standardwebhooks.ValidateMessageID(id) != nil {
			return
		}
		h.Set("X-Ts", "1700000000")
		h.Set("X-Sig", "v="+hex.EncodeToString(fuzzMAC(secret, id+".1700000000."+string(body))))
		res, err := v.Verify(Request{Headers: h, Body: body}, secret, fuzzNow)
		require.NoError(t, err)
		require.Equal(t, id, res.MessageID)
		require.True(t, res.MessageIDSigned)
	})
}
