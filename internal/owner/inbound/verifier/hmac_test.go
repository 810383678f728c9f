package verifier_test

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

var (
	hmacSecret = []byte("provider-secret-0123456789")
	hmacOther  = []byte("provider-secret-9876543210")
	hmacNow    = time.Unix(1700000000, 0)
	hmacBody   = []byte(`{"event":"order.created","order":{"id":7}}`)
)

func withDefaults(cases []verifyCase) []verifyCase {
	for i := range cases {
		if cases[i].secret == nil {
			cases[i].secret = hmacSecret
		}
		cases[i].now = hmacNow
	}
	return cases
}

func TestHMACBodyHexPrefixed(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, verifier.KindHMAC, `{"signature_header":"X-Signature","signature_prefix":"sha256=","event_type_header":"X-Event"}`)
	sig := "sha256=" + hexs(hmacSHA256(hmacSecret, string(hmacBody)))
	req := func(sig string, body []byte) verifier.Request {
		return verifier.Request{Headers: domain.Header{"X-Signature": {sig}, "X-Event": {"order.created"}}, Body: body}
	}
	digest := sha256.Sum256(hmacBody)
	ok := verifier.Result{MessageID: hexs(digest[:]), MessageIDSigned: true, EventType: "order.created"}

	runVerifyCases(t, v, withDefaults([]verifyCase{
		{name: "valid; id is the body digest", req: req(sig, hmacBody), want: ok},
		{name: "wrong secret", req: req(sig, hmacBody), secret: hmacOther, wantErr: verifier.ErrUnauthorized},
		{name: "altered body", req: req(sig, []byte(`{"event":"order.created","order":{"id":8}}`)), wantErr: verifier.ErrUnauthorized},
		{name: "missing signature", req: verifier.Request{Headers: domain.Header{"X-Event": {"order.created"}}, Body: hmacBody}, wantErr: verifier.ErrUnauthorized},
		{name: "missing prefix", req: req(sig[7:], hmacBody), wantErr: verifier.ErrUnauthorized},
		{name: "prefix in other case", req: req("SHA256="+sig[7:], hmacBody), wantErr: verifier.ErrUnauthorized},
		{name: "upper-case hex", req: req("sha256="+strings.ToUpper(sig[7:]), hmacBody), want: ok},
		{name: "surrounding whitespace", req: req("  "+sig+"\t", hmacBody), want: ok},
		{name: "lower-case header names", req: verifier.Request{Headers: domain.Header{"x-signature": {sig}, "x-event": {"order.created"}}, Body: hmacBody}, want: ok},
		{name: "duplicated signature header", req: verifier.Request{Headers: domain.Header{"X-Signature": {"sha256=00", sig}, "X-Event": {"order.created"}}, Body: hmacBody}, wantErr: verifier.ErrMalformed},
		{name: "missing event header", req: verifier.Request{Headers: domain.Header{"X-Signature": {sig}}, Body: hmacBody}, wantErr: verifier.ErrMalformed},
		{name: "base64 instead of hex", req: req("sha256="+b64(hmacSHA256(hmacSecret, string(hmacBody))), hmacBody), wantErr: verifier.ErrUnauthorized},
	}))
}

func TestHMACTimestampBodyBase64(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, verifier.KindHMAC, `{"signature_header":"X-Sig","encoding":"base64","payload":"timestamp.body","timestamp_header":"X-Timestamp","id_header":"X-Request-Id"}`)
	req := func(id, ts string, body []byte, key []byte) verifier.Request {
		return verifier.Request{Headers: domain.Header{
			"X-Sig":        {b64(hmacSHA256(key, ts, ".", string(body)))},
			"X-Timestamp":  {ts},
			"X-Request-Id": {id},
		}, Body: body}
	}
	at := func(sec int64) verifier.Request {
		return req("req_1", strconv.FormatInt(sec, 10), hmacBody, hmacSecret)
	}
	edit := func(r verifier.Request, f func(h domain.Header)) verifier.Request {
		f(r.Headers)
		return r
	}
	// The id header is outside this payload: usable, but not signed.
	ok := verifier.Result{MessageID: "req_1", MessageIDSigned: false, Timestamp: hmacNow}

	runVerifyCases(t, v, withDefaults([]verifyCase{
		{name: "valid", req: at(1700000000), want: ok},
		{name: "wrong secret", req: req("req_1", "1700000000", hmacBody, hmacOther), wantErr: verifier.ErrUnauthorized},
		{name: "altered body", req: verifier.Request{Headers: at(1700000000).Headers, Body: []byte("{}")}, wantErr: verifier.ErrUnauthorized},
		{name: "timestamp swapped after signing", req: edit(at(1700000000), func(h domain.Header) { h.Set("X-Timestamp", "1700000001") }), wantErr: verifier.ErrUnauthorized},
		{name: "stale", req: at(1700000000 - 301), wantErr: verifier.ErrStale},
		{name: "future", req: at(1700000000 + 301), wantErr: verifier.ErrStale},
		{name: "missing timestamp", req: edit(at(1700000000), func(h domain.Header) { h.Del("X-Timestamp") }), wantErr: verifier.ErrMalformed},
		{name: "padded timestamp", req: req("req_1", "01700000000", hmacBody, hmacSecret), wantErr: verifier.ErrMalformed},
		{name: "signed timestamp", req: req("req_1", "+1700000000", hmacBody, hmacSecret), wantErr: verifier.ErrMalformed},
		{name: "space-padded timestamp", req: req("req_1", "1700000000 ", hmacBody, hmacSecret), wantErr: verifier.ErrMalformed},
		{name: "milliseconds where seconds are configured", req: req("req_1", "1700000000000", hmacBody, hmacSecret), wantErr: verifier.ErrStale},
		{name: "missing id", req: edit(at(1700000000), func(h domain.Header) { h.Del("X-Request-Id") }), wantErr: verifier.ErrMalformed},
		{name: "id with dot", req: req("req.1", "1700000000", hmacBody, hmacSecret), wantErr: verifier.ErrMalformed},
		{name: "duplicated timestamp", req: edit(at(1700000000), func(h domain.Header) { h.Add("X-Timestamp", "1700000000") }), wantErr: verifier.ErrMalformed},
		{name: "hex instead of base64", req: edit(at(1700000000), func(h domain.Header) {
			h.Set("X-Sig", hexs(hmacSHA256(hmacSecret, "1700000000", ".", string(hmacBody))))
		}), wantErr: verifier.ErrUnauthorized},
		{name: "unpadded base64", req: edit(at(1700000000), func(h domain.Header) {
			h.Set("X-Sig", strings.TrimRight(h.Get("X-Sig"), "="))
		}), wantErr: verifier.ErrUnauthorized},
	}))
}

func TestHMACIDTimestampBodyUnixMs(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"id.timestamp.body","timestamp_header":"X-Ts","timestamp_format":"unix_ms","id_header":"X-Id","tolerance_seconds":60}`)
	req := func(id, ts string) verifier.Request {
		return verifier.Request{Headers: domain.Header{
			"X-Sig": {hexs(hmacSHA256(hmacSecret, id, ".", ts, ".", string(hmacBody)))},
			"X-Ts":  {ts},
			"X-Id":  {id},
		}, Body: hmacBody}
	}
	runVerifyCases(t, v, withDefaults([]verifyCase{
		{name: "valid", req: req("evt_9", "1700000000123"), want: verifier.Result{MessageID: "evt_9", MessageIDSigned: true, Timestamp: time.UnixMilli(1700000000123)}},
		{name: "id swapped after signing", req: func() verifier.Request { r := req("evt_9", "1700000000123"); r.Headers.Set("X-Id", "evt_8"); return r }(), wantErr: verifier.ErrUnauthorized},
		{name: "61s old", req: req("evt_9", "1699999939000"), wantErr: verifier.ErrStale},
		{name: "61s ahead", req: req("evt_9", "1700000061000"), wantErr: verifier.ErrStale},
		{name: "seconds where milliseconds are configured", req: req("evt_9", "1700000000"), wantErr: verifier.ErrStale},
		{name: "fractional", req: req("evt_9", "1700000000123.5"), wantErr: verifier.ErrMalformed},
	}))
}

func TestHMACRFC3339(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"timestamp.body","timestamp_header":"X-Ts","timestamp_format":"rfc3339"}`)
	req := func(ts string) verifier.Request {
		return verifier.Request{Headers: domain.Header{
			"X-Sig": {hexs(hmacSHA256(hmacSecret, ts, ".", string(hmacBody)))},
			"X-Ts":  {ts},
		}, Body: hmacBody}
	}
	digest := sha256.Sum256(hmacBody)
	runVerifyCases(t, v, withDefaults([]verifyCase{
		{name: "valid UTC", req: req("2023-11-14T22:13:20Z"), want: verifier.Result{MessageID: hexs(digest[:]), MessageIDSigned: true, Timestamp: hmacNow}},
		{name: "valid with offset and fraction", req: req("2023-11-15T00:13:20.5+02:00"), want: verifier.Result{MessageID: hexs(digest[:]), MessageIDSigned: true, Timestamp: hmacNow.Add(500 * time.Millisecond)}},
		{name: "stale", req: req("2023-11-14T22:08:19Z"), wantErr: verifier.ErrStale},
		{name: "future", req: req("2023-11-14T22:18:21Z"), wantErr: verifier.ErrStale},
		{name: "no zone", req: req("2023-11-14T22:13:20"), wantErr: verifier.ErrMalformed},
		{name: "unix seconds", req: req("1700000000"), wantErr: verifier.ErrMalformed},
	}))
}
