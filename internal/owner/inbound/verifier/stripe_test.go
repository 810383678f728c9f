package verifier_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

func TestStripeVerify(t *testing.T) {
	t.Parallel()
	secret := []byte("whsec_" + strings.Repeat("Tq9", 11))
	other := []byte("whsec_" + strings.Repeat("Zz8", 11))
	now := time.Unix(1700000000, 0)
	body := []byte(`{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded","data":{"object":{}}}`)

	// v1 is Stripe's documented scheme: HMAC-SHA256 keyed with the whole
	// endpoint secret over "<t>.<payload>", hex encoded.
	v1 := func(key []byte, ts string, body []byte) string {
		return hexs(hmacSHA256(key, ts, ".", string(body)))
	}
	valid := v1(secret, "1700000000", body)
	wrong := v1(other, "1700000000", body)
	req := func(header string, body []byte) verifier.Request {
		return verifier.Request{Headers: domain.Header{"Stripe-Signature": {header}}, Body: body}
	}
	signedAt := func(ts int64) verifier.Request {
		s := strconv.FormatInt(ts, 10)
		return req("t="+s+",v1="+v1(secret, s, body), body)
	}
	withBody := func(b string) verifier.Request {
		return req("t=1700000000,v1="+v1(secret, "1700000000", []byte(b)), []byte(b))
	}
	ok := verifier.Result{MessageID: "evt_1NG8Du2eZvKYlo2CUI79vXWy", MessageIDSigned: true, Timestamp: now, EventType: "payment_intent.succeeded"}

	cases := []verifyCase{
		{name: "valid", req: signedAt(1700000000), want: ok},
		{name: "wrong secret", req: req("t=1700000000,v1="+wrong, body), wantErr: verifier.ErrUnauthorized},
		{name: "altered body", req: req("t=1700000000,v1="+valid, []byte(strings.Replace(string(body), "succeeded", "failed", 1))), wantErr: verifier.ErrUnauthorized},
		{name: "timestamp swapped after signing", req: req("t=1700000001,v1="+valid, body), wantErr: verifier.ErrUnauthorized},
		{name: "missing header", req: verifier.Request{Headers: domain.Header{}, Body: body}, wantErr: verifier.ErrUnauthorized},
		{name: "no v1 entry", req: req("t=1700000000,v0="+valid, body), wantErr: verifier.ErrUnauthorized},
		{name: "stale", req: signedAt(1700000000 - 301), wantErr: verifier.ErrStale},
		{name: "future", req: signedAt(1700000000 + 301), wantErr: verifier.ErrStale},
		{name: "second v1 is the valid one", req: req("t=1700000000,v1="+wrong+",v1="+valid, body), want: ok},
		{name: "t after the signatures, v0 ignored", req: req("v0="+wrong+",v1="+valid+",t=1700000000", body), want: ok},
		{name: "spaces after commas", req: req("t=1700000000, v1="+wrong+" ,\tv1="+valid, body), want: ok},
		{name: "upper-case hex", req: req("t=1700000000,v1="+strings.ToUpper(valid), body), want: ok},
		{name: "lower-case header name", req: verifier.Request{Headers: domain.Header{"stripe-signature": {"t=1700000000,v1=" + valid}}, Body: body}, want: ok},
		{name: "upper-case scheme", req: req("t=1700000000,V1="+valid, body), wantErr: verifier.ErrUnauthorized},
		{name: "upper-case t", req: req("T=1700000000,v1="+valid, body), wantErr: verifier.ErrMalformed},
		{name: "missing t", req: req("v1="+valid, body), wantErr: verifier.ErrMalformed},
		{name: "duplicate t", req: req("t=1700000000,t=1700000000,v1="+valid, body), wantErr: verifier.ErrMalformed},
		{name: "padded t", req: req("t=01700000000,v1="+v1(secret, "01700000000", body), body), wantErr: verifier.ErrMalformed},
		{name: "signed t", req: req("t=+1700000000,v1="+v1(secret, "+1700000000", body), body), wantErr: verifier.ErrMalformed},
		{name: "space inside t", req: req("t= 1700000000,v1="+valid, body), wantErr: verifier.ErrMalformed},
		{name: "item without =", req: req("t=1700000000,v1"+valid, body), wantErr: verifier.ErrMalformed},
		{name: "empty item", req: req("t=1700000000,,v1="+valid, body), wantErr: verifier.ErrMalformed},
		{name: "ten signatures", req: req("t=1700000000"+strings.Repeat(",v1="+wrong, 9)+",v1="+valid, body), want: ok},
		{name: "eleven signatures", req: req("t=1700000000"+strings.Repeat(",v1="+wrong, 10)+",v1="+valid, body), wantErr: verifier.ErrMalformed},
		{name: "duplicated header", req: verifier.Request{Headers: domain.Header{"Stripe-Signature": {"t=1700000000,v1=" + wrong, "t=1700000000,v1=" + valid}}, Body: body}, wantErr: verifier.ErrMalformed},
		{name: "body without id", req: withBody(`{"type":"payment_intent.succeeded"}`), wantErr: verifier.ErrMalformed},
		{name: "body id not a string", req: withBody(`{"id":42,"type":"x"}`), wantErr: verifier.ErrMalformed},
		{name: "body id with dot", req: withBody(`{"id":"evt.1","type":"x"}`), wantErr: verifier.ErrMalformed},
		{name: "body without type", req: withBody(`{"id":"evt_1"}`), wantErr: verifier.ErrMalformed},
		{name: "body not JSON", req: withBody(`evt_1`), wantErr: verifier.ErrMalformed},
		{name: "body keys match exactly", req: withBody(`{"ID":"evt_1","TYPE":"x"}`), wantErr: verifier.ErrMalformed},
		{name: "stored secret without whsec_", req: signedAt(1700000000), secret: []byte(strings.Repeat("a", 32)), wantErr: verifier.ErrMisconfigured},
	}
	for i := range cases {
		if cases[i].secret == nil {
			cases[i].secret = secret
		}
		cases[i].now = now
	}
	runVerifyCases(t, newVerifier(t, verifier.KindStripe, ""), cases)

	wide := newVerifier(t, verifier.KindStripe, `{"tolerance_seconds":600}`)
	runVerifyCases(t, wide, []verifyCase{
		{name: "wide window 599s old", req: signedAt(1700000000 - 599), secret: secret, now: now,
			want: verifier.Result{MessageID: ok.MessageID, MessageIDSigned: true, Timestamp: now.Add(-599 * time.Second), EventType: ok.EventType}},
		{name: "wide window 601s old", req: signedAt(1700000000 - 601), secret: secret, now: now, wantErr: verifier.ErrStale},
	})
}
