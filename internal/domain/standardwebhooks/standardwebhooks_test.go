package standardwebhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// The specification's test vector, the one every reference library checks:
// standard-webhooks/standard-webhooks, libraries/go/webhook_test.go
// (TestWebhookSign), also in the other libraries' tests.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesSpecVector(t *testing.T) {
	t.Parallel()
	key, err := standardwebhooks.ParseSecret(vectorSecret)
	require.NoError(t, err)
	require.Len(t, key, 24)
	got := standardwebhooks.Sign(key, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	require.Equal(t, vectorSignature, got)
}

func TestVerifySpecVector(t *testing.T) {
	t.Parallel()
	key, err := standardwebhooks.ParseSecret(vectorSecret)
	require.NoError(t, err)
	v, err := standardwebhooks.NewVerifier(0, key)
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTimestamp))
	h.Set("webhook-signature", vectorSignature)
	id, ts, err := v.Verify(h, []byte(vectorBody), time.Unix(vectorTimestamp+10, 0))
	require.NoError(t, err)
	require.Equal(t, vectorID, id)
	require.Equal(t, int64(vectorTimestamp), ts.Unix())
}

func TestSignAll(t *testing.T) {
	t.Parallel()
	k1 := []byte(strings.Repeat("a", 32))
	k2 := []byte(strings.Repeat("b", 32))
	ts := time.Unix(1700000000, 0)
	got := standardwebhooks.SignAll([][]byte{k1, k2}, "msg_1", ts, []byte("{}"))
	require.Equal(t, independentSign(k1, "msg_1", "1700000000", []byte("{}"))+" "+independentSign(k2, "msg_1", "1700000000", []byte("{}")), got)

	// A receiver holding only the new key verifies the doubly signed message.
	v, err := standardwebhooks.NewVerifier(0, k2)
	require.NoError(t, err)
	h := http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {"1700000000"}, "Webhook-Signature": {got}}
	_, _, err = v.Verify(h, []byte("{}"), ts)
	require.NoError(t, err)
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	s, err := standardwebhooks.NewSecret()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(s, "whsec_"))
	key, err := standardwebhooks.ParseSecret(s)
	require.NoError(t, err)
	require.Len(t, key, 32)
	s2, err := standardwebhooks.NewSecret()
	require.NoError(t, err)
	require.NotEqual(t, s, s2)
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name    string
		secret  string
		wantLen int
	}{
		{"prefixed 32", "whsec_" + b64(32), 32},
		{"unprefixed 32 (as the reference accepts)", b64(32), 32},
		{"minimum 24", "whsec_" + b64(24), 24},
		{"maximum 64", "whsec_" + b64(64), 64},
		{"5 bytes the reference accepts", "whsec_" + b64(5), 0},
		{"23 bytes", "whsec_" + b64(23), 0},
		{"65 bytes", "whsec_" + b64(65), 0},
		{"empty", "", 0},
		{"prefix only", "whsec_", 0},
		{"not base64", "whsec_!!!!", 0},
		{"missing padding", "whsec_" + strings.TrimRight(b64(31), "="), 0},
		{"url alphabet", "whsec_" + strings.Repeat("-", 32), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, err := standardwebhooks.ParseSecret(tt.secret)
			if tt.wantLen == 0 {
				require.ErrorIs(t, err, standardwebhooks.ErrInvalidSecret)
				if len(tt.secret) > 8 {
					require.NotContains(t, err.Error(), tt.secret[6:], "error echoes the secret")
				}
				return
			}
			require.NoError(t, err)
			require.Len(t, key, tt.wantLen)
		})
	}
}

func TestNewVerifier(t *testing.T) {
	t.Parallel()
	good := make([]byte, 32)
	_, err := standardwebhooks.NewVerifier(0)
	require.ErrorIs(t, err, standardwebhooks.ErrInvalidSecret)
	_, err = standardwebhooks.NewVerifier(0, make([]byte, 5))
	require.ErrorIs(t, err, standardwebhooks.ErrInvalidSecret)
	_, err = standardwebhooks.NewVerifier(-time.Minute, good)
	require.ErrorContains(t, err, "tolerance")
	_, err = standardwebhooks.NewVerifier(time.Millisecond, good)
	require.ErrorContains(t, err, "tolerance")
}

// independentSign computes a v1 signature without the package's helpers.
func independentSign(key []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	otherKey := []byte("fedcba9876543210fedcba9876543210")
	now := time.Unix(1700000000, 0)
	const id = "msg_2Xb7"
	body := []byte(`{"type":"corpus.note.changed","data":{"id":"n1"}}`)
	ts := "1700000000"
	valid := independentSign(key, id, ts, body)
	// An entry that is well formed but signed by another key.
	wrong := independentSign(otherKey, id, ts, body)

	type request struct {
		h    http.Header
		body []byte
		now  time.Time
	}
	base := func() request {
		return request{
			h:    http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {valid}},
			body: body,
			now:  now,
		}
	}
	at := func(sec int64) request {
		r := base()
		s := strconv.FormatInt(sec, 10)
		r.h["Webhook-Timestamp"] = []string{s}
		r.h["Webhook-Signature"] = []string{independentSign(key, id, s, body)}
		return r
	}
	withID := func(newID string) request {
		r := base()
		r.h["Webhook-Id"] = []string{newID}
		r.h["Webhook-Signature"] = []string{independentSign(key, newID, ts, body)}
		return r
	}
	withTS := func(raw string) request {
		r := base()
		r.h["Webhook-Timestamp"] = []string{raw}
		r.h["Webhook-Signature"] = []string{independentSign(key, id, raw, body)}
		return r
	}
	withSig := func(sig string) request {
		r := base()
		r.h["Webhook-Signature"] = []string{sig}
		return r
	}
	without := func(name string) request {
		r := base()
		delete(r.h, name)
		return r
	}
	twice := func(name string) request {
		r := base()
		r.h[name] = append(r.h[name], r.h[name][0])
		return r
	}

	tests := []struct {
		name       string
		req        request
		wantErr    error  // nil: verifies
		wantHeader string // for *HeaderError
	}{
		{name: "valid", req: base()},
		{name: "wrong secret", req: withSig(wrong), wantErr: standardwebhooks.ErrNoMatch},
		{name: "altered body", req: func() request {
			r := base()
			r.body = []byte(`{"type":"corpus.note.changed","data":{"id":"n2"}}`)
			return r
		}(), wantErr: standardwebhooks.ErrNoMatch},
		{name: "empty body when signed non-empty", req: func() request { r := base(); r.body = nil; return r }(), wantErr: standardwebhooks.ErrNoMatch},
		{name: "id swapped after signing", req: func() request { r := base(); r.h["Webhook-Id"] = []string{"msg_other"}; return r }(), wantErr: standardwebhooks.ErrNoMatch},
		{name: "missing id", req: without("Webhook-Id"), wantErr: standardwebhooks.ErrMissingHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "missing timestamp", req: without("Webhook-Timestamp"), wantErr: standardwebhooks.ErrMissingHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "missing signature", req: without("Webhook-Signature"), wantErr: standardwebhooks.ErrMissingHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "empty signature", req: withSig(""), wantErr: standardwebhooks.ErrMissingHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "blank signature", req: withSig("  \t "), wantErr: standardwebhooks.ErrMissingHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "stale by 5m01s", req: at(1700000000 - 301), wantErr: standardwebhooks.ErrStale},
		{name: "stale by a day", req: at(1700000000 - 86400), wantErr: standardwebhooks.ErrStale},
		{name: "exactly 5m old passes", req: at(1700000000 - 300)},
		{name: "future by 5m01s", req: at(1700000000 + 301), wantErr: standardwebhooks.ErrFuture},
		{name: "exactly 5m ahead passes", req: at(1700000000 + 300)},
		{name: "far future", req: at(999999999999999999), wantErr: standardwebhooks.ErrFuture},
		{name: "epoch zero", req: at(0), wantErr: standardwebhooks.ErrStale},
		{name: "stale with a forged signature is unauthenticated, not stale", req: func() request {
			r := at(1700000000 - 86400)
			r.h["Webhook-Signature"] = []string{wrong}
			return r
		}(), wantErr: standardwebhooks.ErrNoMatch},
		{name: "second entry is the valid one", req: withSig(wrong + " " + valid)},
		{name: "valid entry last of ten", req: withSig(strings.Repeat(wrong+" ", 9) + valid)},
		{name: "unknown versions skipped", req: withSig("v2," + valid[3:] + " v1a,abc " + valid)},
		{name: "valid value under unknown version only", req: withSig("v2," + valid[3:]), wantErr: standardwebhooks.ErrNoMatch},
		{name: "upper-case version is not v1", req: withSig("V1," + valid[3:]), wantErr: standardwebhooks.ErrNoMatch},
		{name: "undecodable v1 entry skipped", req: withSig("v1,!!!notbase64 " + valid)},
		{name: "surrounding and repeated blanks", req: withSig(" \t" + wrong + "  \t " + valid + " ")},
		{name: "proxy-folded comma list does not match", req: withSig(valid + ", " + wrong), wantErr: standardwebhooks.ErrNoMatch},
		{name: "entry without comma", req: withSig("garbage " + valid), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "entry with empty value", req: withSig("v1, " + valid), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "oversized list (11 entries)", req: withSig(strings.Repeat(wrong+" ", 10) + valid), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "oversized header", req: withSig(valid + " v9," + strings.Repeat("A", 3000)), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "signature with a NUL byte", req: withSig(valid + "\x00"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "padded timestamp (leading zero)", req: withTS("01700000000"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "plus-signed timestamp", req: withTS("+1700000000"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "minus-signed timestamp", req: withTS("-1700000000"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "space-padded timestamp", req: withTS(" 1700000000"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "fractional timestamp", req: withTS("1700000000.0"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "exponent timestamp", req: withTS("17e8"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "milliseconds timestamp is far future", req: withTS("1700000000000"), wantErr: standardwebhooks.ErrFuture},
		{name: "19-digit timestamp", req: withTS("1700000000000000000"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "id with dot", req: withID("msg.1"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "id with space", req: withID("msg 1"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "id with control char", req: withID("msg\x7f1"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "id with non-ASCII", req: withID("msg_é"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "id of 256 bytes", req: withID(strings.Repeat("a", 256))},
		{name: "id of 257 bytes", req: withID(strings.Repeat("a", 257)), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "duplicated id", req: twice("Webhook-Id"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
		{name: "duplicated timestamp", req: twice("Webhook-Timestamp"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderTimestamp},
		{name: "duplicated signature", req: twice("Webhook-Signature"), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderSignature},
		{name: "lower-case header keys", req: request{
			h:    http.Header{"webhook-id": {id}, "webhook-timestamp": {ts}, "webhook-signature": {valid}},
			body: body, now: now,
		}},
		{name: "duplicate hidden under another key case", req: func() request {
			r := base()
			r.h["webhook-id"] = []string{"msg_evil"}
			return r
		}(), wantErr: standardwebhooks.ErrInvalidHeader, wantHeader: standardwebhooks.HeaderID},
	}
	v, err := standardwebhooks.NewVerifier(0, key)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gotID, gotTS, err := v.Verify(tt.req.h, tt.req.body, tt.req.now)
			if tt.wantErr == nil {
				require.NoError(t, err)
				require.Equal(t, firstValue(tt.req.h, "webhook-id"), gotID)
				require.Equal(t, firstValue(tt.req.h, "webhook-timestamp"), strconv.FormatInt(gotTS.Unix(), 10))
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			require.Empty(t, gotID)
			require.True(t, gotTS.IsZero())
			var he *standardwebhooks.HeaderError
			if tt.wantHeader != "" {
				require.True(t, errors.As(err, &he), "want *HeaderError, got %T", err)
				require.Equal(t, tt.wantHeader, he.Header)
			}
		})
	}
}

func firstValue(h http.Header, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v[0]
		}
	}
	return ""
}

func TestVerifyDuringRotation(t *testing.T) {
	t.Parallel()
	oldKey := []byte(strings.Repeat("o", 24))
	newKey := []byte(strings.Repeat("n", 64))
	v, err := standardwebhooks.NewVerifier(time.Minute, oldKey, newKey)
	require.NoError(t, err)
	now := time.Unix(1700000000, 0)
	for _, k := range [][]byte{oldKey, newKey} {
		h := http.Header{"Webhook-Id": {"m"}, "Webhook-Timestamp": {"1700000000"}, "Webhook-Signature": {independentSign(k, "m", "1700000000", nil)}}
		_, _, err := v.Verify(h, nil, now)
		require.NoError(t, err)
		// The custom tolerance applies.
		_, _, err = v.Verify(h, nil, now.Add(61*time.Second))
		require.ErrorIs(t, err, standardwebhooks.ErrStale)
	}
}

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"0": 0, "1": 1, "1614265330": 1614265330, "999999999999999999": 999999999999999999} {
		got, err := standardwebhooks.ParseTimestamp(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got.Unix(), in)
	}
	for _, in := range []string{"", "00", "01", "+1", "-1", " 1", "1 ", "1_000", "0x10", "1.5", "١٢٣", "1000000000000000000"} {
		_, err := standardwebhooks.ParseTimestamp(in)
		require.Error(t, err, in)
	}
}

func FuzzVerify(f *testing.F) {
	key, err := standardwebhooks.ParseSecret(vectorSecret)
	require.NoError(f, err)
	v, err := standardwebhooks.NewVerifier(0, key)
	require.NoError(f, err)
	f.Add(vectorID, "1614265330", vectorSignature, []byte(vectorBody))
	f.Add("msg.1", "01614265330", "v1,a v1a,b", []byte{})
	f.Add("", "", "", []byte(nil))
	f.Add("m", "1", " \t v1,  ,v1 ", []byte("x"))

	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
		now := time.Unix(1614265330, 0)
		gotID, gotTS, err := v.Verify(h, body, now)
		if err == nil {
			// Only a list carrying the exact canonical signature can pass.
			require.Equal(t, id, gotID)
			require.Equal(t, ts, strconv.FormatInt(gotTS.Unix(), 10))
			require.Contains(t, strings.Fields(sig), independentSign(key, id, ts, body))
		}

		// A correctly signed message with a valid id always verifies.
		if standardwebhooks.ValidateMessageID(id) != nil {
			return
		}
		good := http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {"1614265330"},
			"Webhook-Signature": {standardwebhooks.Sign(key, id, now, body)}}
		gotID, _, err = v.Verify(good, body, now)
		require.NoError(t, err)
		require.Equal(t, id, gotID)
		require.Equal(t, independentSign(key, id, "1614265330", body), good.Get("Webhook-Signature"))
	})
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"0", "1614265330", "01", "+1", " 1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := standardwebhooks.ParseTimestamp(s)
		if err != nil {
			return
		}
		// Exactly one spelling per timestamp: the canonical decimal form.
		require.Equal(t, s, strconv.FormatInt(ts.Unix(), 10))
	})
}

func FuzzParseSignatureList(f *testing.F) {
	for _, s := range []string{vectorSignature, "v1,a v1,b", " v1,a\t", "v1,a, v1,b", ",", "v1,", strings.Repeat("v1,a ", 11)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sigs, err := standardwebhooks.ParseSignatureList(s)
		if err != nil {
			return
		}
		require.NotEmpty(t, sigs)
		require.LessOrEqual(t, len(sigs), standardwebhooks.MaxSignatures)
		for _, sig := range sigs {
			require.NotEmpty(t, sig.Version)
			require.NotEmpty(t, sig.Value)
			require.NotContains(t, sig.Version, ",")
			require.Contains(t, s, sig.Version+","+sig.Value)
		}
	})
}

func FuzzValidateMessageID(f *testing.F) {
	for _, s := range []string{vectorID, "a.b", "", " ", strings.Repeat("x", 257)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if standardwebhooks.ValidateMessageID(s) != nil {
			return
		}
		require.NotEmpty(t, s)
		require.LessOrEqual(t, len(s), standardwebhooks.MaxMessageIDLen)
		require.NotContains(t, s, ".")
		require.Equal(t, strings.Join(strings.Fields(s), ""), s)
	})
}
