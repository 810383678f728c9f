package verifier_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

func TestGitHubDocumentedExample(t *testing.T) {
	t.Parallel()
	// GitHub's "Validating webhook deliveries" page: this secret and payload
	// give this X-Hub-Signature-256.
	v := newVerifier(t, verifier.KindGitHub, "{}")
	res, err := v.Verify(verifier.Request{
		Headers: domain.Header{
			"X-Hub-Signature-256": {"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"},
			"X-Github-Delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"},
			"X-Github-Event":      {"ping"},
		},
		Body: []byte("Hello, World!"),
	}, []byte("It's a Secret to Everybody"), time.Now())
	require.NoError(t, err)
	require.Equal(t, "72d3162e-cc78-11e3-81ab-4c9367dc0958", res.MessageID)
	require.False(t, res.MessageIDSigned)
	require.True(t, res.Timestamp.IsZero())
	require.Equal(t, "ping", res.EventType)
}

func TestGitHubVerify(t *testing.T) {
	t.Parallel()
	secret := []byte("a GitHub webhook secret of some length")
	const delivery = "0b989ba4-242f-11e5-81e1-c7b6e5e9e8f7"
	body := []byte(`{"action":"opened","number":1}`)
	sig := "sha256=" + hexs(hmacSHA256(secret, string(body)))
	wrongSig := "sha256=" + hexs(hmacSHA256([]byte("another secret of enough length"), string(body)))
	req := func(sig string) verifier.Request {
		return verifier.Request{Headers: domain.Header{
			"X-Hub-Signature-256": {sig},
			"X-Github-Delivery":   {delivery},
			"X-Github-Event":      {"pull_request"},
		}, Body: body}
	}
	edit := func(f func(h domain.Header)) verifier.Request {
		r := req(sig)
		f(r.Headers)
		return r
	}
	ok := verifier.Result{MessageID: delivery, EventType: "pull_request"}

	cases := []verifyCase{
		{name: "valid", req: req(sig), want: ok},
		{name: "no window: a year later still verifies", req: req(sig), now: time.Unix(1700000000, 0).AddDate(1, 0, 0), want: ok},
		{name: "wrong secret", req: req(wrongSig), wantErr: verifier.ErrUnauthorized},
		{name: "altered body", req: verifier.Request{Headers: req(sig).Headers, Body: []byte(`{"action":"closed","number":1}`)}, wantErr: verifier.ErrUnauthorized},
		{name: "empty body", req: verifier.Request{Headers: req(sig).Headers}, wantErr: verifier.ErrUnauthorized},
		{name: "missing signature", req: edit(func(h domain.Header) { h.Del("X-Hub-Signature-256") }), wantErr: verifier.ErrUnauthorized},
		{name: "only the legacy sha1 header", req: edit(func(h domain.Header) {
			h.Del("X-Hub-Signature-256")
			h.Set("X-Hub-Signature", "sha1="+strings.Repeat("0", 40))
		}), wantErr: verifier.ErrUnauthorized},
		{name: "empty signature", req: req(""), wantErr: verifier.ErrUnauthorized},
		{name: "missing delivery", req: edit(func(h domain.Header) { h.Del("X-Github-Delivery") }), wantErr: verifier.ErrMalformed},
		{name: "missing event", req: edit(func(h domain.Header) { h.Del("X-Github-Event") }), wantErr: verifier.ErrMalformed},
		{name: "upper-case hex", req: req("sha256=" + strings.ToUpper(sig[7:])), want: ok},
		{name: "surrounding whitespace", req: req(" \t" + sig + " "), want: ok},
		{name: "lower-case header names", req: verifier.Request{Headers: domain.Header{
			"x-hub-signature-256": {sig}, "x-github-delivery": {delivery}, "x-github-event": {"pull_request"},
		}, Body: body}, want: ok},
		{name: "upper-case scheme", req: req("SHA256=" + sig[7:]), wantErr: verifier.ErrUnauthorized},
		{name: "sha1 scheme", req: req("sha1=" + sig[7:47]), wantErr: verifier.ErrUnauthorized},
		{name: "no scheme", req: req(sig[7:]), wantErr: verifier.ErrMalformed},
		{name: "truncated hex", req: req(sig[:len(sig)-2]), wantErr: verifier.ErrUnauthorized},
		{name: "odd hex", req: req(sig[:len(sig)-1]), wantErr: verifier.ErrUnauthorized},
		{name: "space inside", req: req("sha256= " + sig[7:]), wantErr: verifier.ErrUnauthorized},
		{name: "two signatures in one header", req: req(wrongSig + "," + sig), wantErr: verifier.ErrUnauthorized},
		{name: "duplicated signature header", req: edit(func(h domain.Header) { h.Add("X-Hub-Signature-256", sig) }), wantErr: verifier.ErrMalformed},
		{name: "duplicated signature header, valid second", req: edit(func(h domain.Header) { h["X-Hub-Signature-256"] = []string{wrongSig, sig} }), wantErr: verifier.ErrMalformed},
		{name: "duplicated delivery in another case", req: edit(func(h domain.Header) { h["x-github-delivery"] = []string{"other"} }), wantErr: verifier.ErrMalformed},
		{name: "delivery with dot", req: edit(func(h domain.Header) { h.Set("X-Github-Delivery", "a.b") }), wantErr: verifier.ErrMalformed},
		{name: "delivery too long", req: edit(func(h domain.Header) { h.Set("X-Github-Delivery", strings.Repeat("d", 257)) }), wantErr: verifier.ErrMalformed},
		{name: "event with space", req: edit(func(h domain.Header) { h.Set("X-Github-Event", "pull request") }), wantErr: verifier.ErrMalformed},
		{name: "oversized signature header", req: req(sig + strings.Repeat("0", 3000)), wantErr: verifier.ErrMalformed},
		{name: "short stored secret", req: req(sig), secret: []byte("short"), wantErr: verifier.ErrMisconfigured},
	}
	for i := range cases {
		if cases[i].secret == nil {
			cases[i].secret = secret
		}
		if cases[i].now.IsZero() {
			cases[i].now = time.Unix(1700000000, 0)
		}
	}
	runVerifyCases(t, newVerifier(t, verifier.KindGitHub, ""), cases)
}
