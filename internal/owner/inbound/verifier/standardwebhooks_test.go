package verifier_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

func TestStandardWebhooksVerify(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := []byte("whsec_" + b64(key))
	otherSecret := []byte("whsec_" + b64([]byte("ffffffffffffffffffffffffffffffff")))
	now := time.Unix(1700000000, 0)
	const id = "msg_2Xb7Yq"
	body := []byte(`{"type":"invoice.paid","timestamp":"2023-11-14T22:13:20Z","data":{"id":"in_1"}}`)

	// sign is the specification's algorithm, written out here.
	sign := func(k []byte, id, ts string, body []byte) string {
		return "v1," + b64(hmacSHA256(k, id, ".", ts, ".", string(body)))
	}
	req := func(id string, ts int64, sig string, body []byte) verifier.Request {
		return verifier.Request{Headers: domain.Header{
			"Webhook-Id":        {id},
			"Webhook-Timestamp": {strconv.FormatInt(ts, 10)},
			"Webhook-Signature": {sig},
		}, Body: body}
	}
	signedAt := func(ts int64) verifier.Request {
		return req(id, ts, sign(key, id, strconv.FormatInt(ts, 10), body), body)
	}
	valid := sign(key, id, "1700000000", body)
	wrong := sign([]byte("ffffffffffffffffffffffffffffffff"), id, "1700000000", body)
	edit := func(r verifier.Request, f func(h domain.Header)) verifier.Request {
		h := r.Headers.Clone()
		f(h)
		return verifier.Request{Headers: h, Body: r.Body}
	}
	ok := verifier.Result{MessageID: id, MessageIDSigned: true, Timestamp: now, EventType: "invoice.paid"}

	cases := []verifyCase{
		{name: "valid", req: signedAt(1700000000), want: ok},
		{name: "wrong secret", req: signedAt(1700000000), secret: otherSecret, wantErr: verifier.ErrUnauthorized},
		{name: "altered body", req: req(id, 1700000000, valid, []byte(strings.Replace(string(body), "in_1", "in_2", 1))), wantErr: verifier.ErrUnauthorized},
		{name: "missing signature", req: edit(signedAt(1700000000), func(h domain.Header) { h.Del("Webhook-Signature") }), wantErr: verifier.ErrUnauthorized},
		{name: "missing id", req: edit(signedAt(1700000000), func(h domain.Header) { h.Del("Webhook-Id") }), wantErr: verifier.ErrMalformed},
		{name: "missing timestamp", req: edit(signedAt(1700000000), func(h domain.Header) { h.Del("Webhook-Timestamp") }), wantErr: verifier.ErrMalformed},
		{name: "stale", req: signedAt(1700000000 - 301), wantErr: verifier.ErrStale},
		{name: "future", req: signedAt(1700000000 + 301), wantErr: verifier.ErrStale},
		{name: "edge of window passes", req: signedAt(1700000000 - 300), want: verifier.Result{MessageID: id, MessageIDSigned: true, Timestamp: now.Add(-300 * time.Second), EventType: "invoice.paid"}},
		{name: "second signature entry is the valid one", req: req(id, 1700000000, wrong+" "+valid, body), want: ok},
		{name: "several entries, unknown versions skipped", req: req(id, 1700000000, "v1a,AAAA "+wrong+" v2,"+valid[3:]+" "+valid, body), want: ok},
		{name: "tabs and repeated spaces", req: req(id, 1700000000, "\t"+wrong+" \t  "+valid+"  ", body), want: ok},
		{name: "lower-case header names", req: verifier.Request{Headers: domain.Header{
			"webhook-id": {id}, "webhook-timestamp": {"1700000000"}, "WEBHOOK-SIGNATURE": {valid},
		}, Body: body}, want: ok},
		{name: "upper-case version", req: req(id, 1700000000, "V1,"+valid[3:], body), wantErr: verifier.ErrUnauthorized},
		{name: "duplicated signature header", req: edit(signedAt(1700000000), func(h domain.Header) { h.Add("Webhook-Signature", valid) }), wantErr: verifier.ErrMalformed},
		{name: "duplicated id header in another case", req: edit(signedAt(1700000000), func(h domain.Header) { h["webhook-id"] = []string{"msg_other"} }), wantErr: verifier.ErrMalformed},
		{name: "oversized signature list", req: req(id, 1700000000, strings.Repeat(wrong+" ", 10)+valid, body), wantErr: verifier.ErrMalformed},
		{name: "entry without version", req: req(id, 1700000000, valid[3:], body), wantErr: verifier.ErrMalformed},
		{name: "padded timestamp", req: edit(signedAt(1700000000), func(h domain.Header) { h.Set("Webhook-Timestamp", "01700000000") }), wantErr: verifier.ErrMalformed},
		{name: "signed timestamp", req: edit(signedAt(1700000000), func(h domain.Header) { h.Set("Webhook-Timestamp", "+1700000000") }), wantErr: verifier.ErrMalformed},
		{name: "id with dot", req: req("msg.1", 1700000000, sign(key, "msg.1", "1700000000", body), body), wantErr: verifier.ErrMalformed},
		{name: "id with control char", req: req("msg\x01", 1700000000, sign(key, "msg\x01", "1700000000", body), body), wantErr: verifier.ErrMalformed},
		{name: "body not JSON has no event type", req: req(id, 1700000000, sign(key, id, "1700000000", []byte("plain")), []byte("plain")),
			want: verifier.Result{MessageID: id, MessageIDSigned: true, Timestamp: now}},
		{name: "invalid stored secret", req: signedAt(1700000000), secret: []byte("whsec_c2hvcnQ="), wantErr: verifier.ErrMisconfigured},
	}
	for i := range cases {
		if cases[i].secret == nil {
			cases[i].secret = secret
		}
		cases[i].now = now
	}
	runVerifyCases(t, newVerifier(t, verifier.KindStandardWebhooks, ""), cases)

	// A per-source tolerance narrows the window.
	narrow := newVerifier(t, verifier.KindStandardWebhooks, `{"tolerance_seconds":60}`)
	runVerifyCases(t, narrow, []verifyCase{
		{name: "59s old", req: signedAt(1700000000 - 59), secret: secret, now: now,
			want: verifier.Result{MessageID: id, MessageIDSigned: true, Timestamp: now.Add(-59 * time.Second), EventType: "invoice.paid"}},
		{name: "61s old", req: signedAt(1700000000 - 61), secret: secret, now: now, wantErr: verifier.ErrStale},
		{name: "61s ahead", req: signedAt(1700000000 + 61), secret: secret, now: now, wantErr: verifier.ErrStale},
	})
}
