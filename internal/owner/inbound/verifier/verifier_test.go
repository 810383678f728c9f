package verifier_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// The helpers below sign messages the way each provider documents it, with
// crypto/hmac directly, so the tests never trust the code under test to
// produce what it then checks.

func hmacSHA256(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func hexs(b []byte) string { return hex.EncodeToString(b) }

// sentinels are the verification outcomes; each error must match exactly one.
var sentinels = []error{verifier.ErrUnauthorized, verifier.ErrMalformed, verifier.ErrStale, verifier.ErrMisconfigured}

// requireOutcome checks that err is nil (want nil) or matches want and no
// other outcome sentinel.
func requireOutcome(t *testing.T, want, err error) {
	t.Helper()
	if want == nil {
		require.NoError(t, err)
		return
	}
	require.ErrorIs(t, err, want)
	for _, s := range sentinels {
		if s != want {
			require.NotErrorIs(t, err, s)
		}
	}
}

type verifyCase struct {
	name    string
	req     verifier.Request
	secret  []byte
	now     time.Time
	wantErr error
	want    verifier.Result
}

func runVerifyCases(t *testing.T, v verifier.Verifier, cases []verifyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := v.Verify(tc.req, tc.secret, tc.now)
			requireOutcome(t, tc.wantErr, err)
			if tc.wantErr != nil {
				require.Equal(t, verifier.Result{}, got)
				return
			}
			require.Equal(t, tc.want.MessageID, got.MessageID)
			require.Equal(t, tc.want.MessageIDSigned, got.MessageIDSigned)
			require.Equal(t, tc.want.EventType, got.EventType)
			require.True(t, tc.want.Timestamp.Equal(got.Timestamp), "timestamp %v, want %v", got.Timestamp, tc.want.Timestamp)
		})
	}
}

func newVerifier(t *testing.T, kind, options string) verifier.Verifier {
	t.Helper()
	f, err := verifier.NewDefaultRegistry().Lookup(kind)
	require.NoError(t, err)
	v, err := f.New(json.RawMessage(options))
	require.NoError(t, err)
	return v
}

func TestSentinelKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		kind domain.Kind
	}{
		{verifier.ErrUnauthorized, domain.KindUnauthorized},
		{verifier.ErrMalformed, domain.KindValidation},
		{verifier.ErrStale, domain.KindValidation},
		{verifier.ErrMisconfigured, domain.KindInternal},
		{verifier.ErrInvalidOptions, domain.KindValidation},
		{verifier.ErrInvalidSecret, domain.KindValidation},
		{verifier.ErrUnknownKind, domain.KindValidation},
	}
	for _, tt := range tests {
		require.Equal(t, tt.kind, domain.AsError(tt.err).Kind, tt.err.Error())
	}
	require.NotErrorIs(t, verifier.ErrMalformed, verifier.ErrStale)
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := verifier.NewDefaultRegistry()
	require.Equal(t, []string{"github", "hmac", "standard-webhooks", "stripe"}, r.Kinds())

	_, err := r.Lookup("gitlab")
	require.ErrorIs(t, err, verifier.ErrUnknownKind)
	require.ErrorContains(t, err, "standard-webhooks")

	// A new kind plugs in without the gateway changing: it only calls Lookup.
	custom := fakeFactory{VerifyFunc: func(verifier.Request, []byte, time.Time) (verifier.Result, error) {
		return verifier.Result{MessageID: "custom"}, nil
	}}
	require.NoError(t, r.Register("acme-cloud", custom))
	f, err := r.Lookup("acme-cloud")
	require.NoError(t, err)
	v, err := f.New(nil)
	require.NoError(t, err)
	res, err := v.Verify(verifier.Request{}, nil, time.Time{})
	require.NoError(t, err)
	require.Equal(t, "custom", res.MessageID)

	require.ErrorContains(t, r.Register("acme-cloud", custom), "registered twice")
	require.ErrorContains(t, r.Register("github", custom), "registered twice")
	for _, bad := range []string{"", "GitHub", "-x", "a b", "a.b", strings.Repeat("a", 65)} {
		require.Error(t, r.Register(bad, custom), bad)
	}
	require.ErrorContains(t, r.Register("nil-factory", nil), "nil factory")

	// Registries are independent.
	_, err = verifier.NewDefaultRegistry().Lookup("acme-cloud")
	require.ErrorIs(t, err, verifier.ErrUnknownKind)
}

// fakeFactory is a hand-written Factory whose Verifier runs VerifyFunc.
type fakeFactory struct {
	VerifyFunc func(req verifier.Request, secret []byte, now time.Time) (verifier.Result, error)
}

func (fakeFactory) GeneratesSecret() bool                            { return false }
func (fakeFactory) NewSecret() ([]byte, error)                       { return nil, errors.New("no") }
func (fakeFactory) ValidateSecret([]byte) error                      { return nil }
func (f fakeFactory) New(json.RawMessage) (verifier.Verifier, error) { return f, nil }
func (fakeFactory) ValidateOptions(raw json.RawMessage) (json.RawMessage, error) {
	return raw, nil
}
func (f fakeFactory) Verify(req verifier.Request, secret []byte, now time.Time) (verifier.Result, error) {
	return f.VerifyFunc(req, secret, now)
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	r := verifier.NewDefaultRegistry()

	sw, err := r.Lookup(verifier.KindStandardWebhooks)
	require.NoError(t, err)
	require.True(t, sw.GeneratesSecret())
	s, err := sw.NewSecret()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(s), "whsec_"))
	require.NoError(t, sw.ValidateSecret(s))
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(s), "whsec_"))
	require.NoError(t, err)
	require.Len(t, key, 32)

	for _, kind := range []string{verifier.KindGitHub, verifier.KindStripe, verifier.KindHMAC} {
		f, err := r.Lookup(kind)
		require.NoError(t, err)
		require.False(t, f.GeneratesSecret(), kind)
		_, err = f.NewSecret()
		require.ErrorIs(t, err, verifier.ErrInvalidSecret, kind)
	}

	tests := []struct {
		kind   string
		secret string
		ok     bool
	}{
		{verifier.KindStandardWebhooks, "whsec_" + b64(make([]byte, 24)), true},
		{verifier.KindStandardWebhooks, b64(make([]byte, 32)), true},
		{verifier.KindStandardWebhooks, "whsec_" + b64(make([]byte, 23)), false},
		{verifier.KindStandardWebhooks, "whsec_" + b64(make([]byte, 65)), false},
		{verifier.KindStandardWebhooks, "not a secret", false},
		{verifier.KindGitHub, "It's a Secret to Everybody", true},
		{verifier.KindGitHub, strings.Repeat("x", 16), true},
		{verifier.KindGitHub, strings.Repeat("x", 15), false},
		{verifier.KindGitHub, strings.Repeat("x", 513), false},
		{verifier.KindGitHub, strings.Repeat("x", 20) + "\n", false},
		{verifier.KindGitHub, " " + strings.Repeat("x", 20), false},
		{verifier.KindGitHub, strings.Repeat("x", 10) + "\x00" + strings.Repeat("x", 10), false},
		{verifier.KindStripe, "whsec_" + strings.Repeat("a", 32), true},
		{verifier.KindStripe, "whsec_" + strings.Repeat("a", 15), false},
		{verifier.KindStripe, "sk_live_" + strings.Repeat("a", 32), false},
		{verifier.KindHMAC, strings.Repeat("k", 16), true},
		{verifier.KindHMAC, "short", false},
	}
	for _, tt := range tests {
		f, err := r.Lookup(tt.kind)
		require.NoError(t, err)
		err = f.ValidateSecret([]byte(tt.secret))
		if tt.ok {
			require.NoError(t, err, "%s %q", tt.kind, tt.secret)
			continue
		}
		require.ErrorIs(t, err, verifier.ErrInvalidSecret, "%s %q", tt.kind, tt.secret)
		if len(tt.secret) > 12 {
			require.NotContains(t, err.Error(), tt.secret[:12], "error echoes the secret")
		}
	}
}

func TestValidateOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind string
		raw  string
		want string // normalized; empty means an ErrInvalidOptions error
	}{
		{"sw defaults from nothing", verifier.KindStandardWebhooks, "", `{"tolerance_seconds":300}`},
		{"sw defaults from null", verifier.KindStandardWebhooks, "null", `{"tolerance_seconds":300}`},
		{"sw defaults from {}", verifier.KindStandardWebhooks, " {} ", `{"tolerance_seconds":300}`},
		{"sw tolerance", verifier.KindStandardWebhooks, `{"tolerance_seconds":60}`, `{"tolerance_seconds":60}`},
		{"sw tolerance max", verifier.KindStandardWebhooks, `{"tolerance_seconds":3600}`, `{"tolerance_seconds":3600}`},
		{"sw tolerance too big", verifier.KindStandardWebhooks, `{"tolerance_seconds":3601}`, ""},
		{"sw tolerance negative", verifier.KindStandardWebhooks, `{"tolerance_seconds":-1}`, ""},
		{"sw tolerance fractional", verifier.KindStandardWebhooks, `{"tolerance_seconds":1.5}`, ""},
		{"sw unknown field", verifier.KindStandardWebhooks, `{"tolerance":60}`, ""},
		{"sw trailing data", verifier.KindStandardWebhooks, `{} {}`, ""},
		{"sw array", verifier.KindStandardWebhooks, `[]`, ""},
		{"sw string", verifier.KindStandardWebhooks, `"x"`, ""},
		{"sw broken", verifier.KindStandardWebhooks, `{`, ""},
		{"sw huge", verifier.KindStandardWebhooks, `{"tolerance_seconds":60` + strings.Repeat(" ", 5000) + `}`, ""},
		{"github empty", verifier.KindGitHub, `{}`, `{}`},
		{"github any field refused", verifier.KindGitHub, `{"tolerance_seconds":60}`, ""},
		{"stripe defaults", verifier.KindStripe, ``, `{"tolerance_seconds":300}`},
		{"stripe tolerance", verifier.KindStripe, `{"tolerance_seconds":120}`, `{"tolerance_seconds":120}`},
		{"hmac minimal", verifier.KindHMAC, `{"signature_header":"x-signature"}`,
			`{"signature_header":"X-Signature","encoding":"hex","payload":"body"}`},
		{"hmac github-like", verifier.KindHMAC, `{"signature_header":"X-Hub-Signature-256","signature_prefix":"sha256=","id_header":"x-github-delivery","event_type_header":"X-GitHub-Event"}`,
			`{"signature_header":"X-Hub-Signature-256","signature_prefix":"sha256=","encoding":"hex","payload":"body","id_header":"X-Github-Delivery","event_type_header":"X-Github-Event"}`},
		{"hmac timestamped", verifier.KindHMAC, `{"signature_header":"X-Sig","encoding":"base64","payload":"timestamp.body","timestamp_header":"X-Timestamp"}`,
			`{"signature_header":"X-Sig","encoding":"base64","payload":"timestamp.body","timestamp_header":"X-Timestamp","timestamp_format":"unix","tolerance_seconds":300}`},
		{"hmac full", verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"id.timestamp.body","timestamp_header":"X-Ts","timestamp_format":"unix_ms","id_header":"X-Id","tolerance_seconds":30}`,
			`{"signature_header":"X-Sig","encoding":"hex","payload":"id.timestamp.body","timestamp_header":"X-Ts","timestamp_format":"unix_ms","id_header":"X-Id","tolerance_seconds":30}`},
		{"hmac no signature header", verifier.KindHMAC, `{}`, ""},
		{"hmac bad header name", verifier.KindHMAC, `{"signature_header":"X Sig"}`, ""},
		{"hmac header name with colon", verifier.KindHMAC, `{"signature_header":"X-Sig:"}`, ""},
		{"hmac same header twice", verifier.KindHMAC, `{"signature_header":"X-Sig","id_header":"x-sig"}`, ""},
		{"hmac bad encoding", verifier.KindHMAC, `{"signature_header":"X-Sig","encoding":"base32"}`, ""},
		{"hmac bad payload", verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"body.timestamp"}`, ""},
		{"hmac unsigned timestamp refused", verifier.KindHMAC, `{"signature_header":"X-Sig","timestamp_header":"X-Ts"}`, ""},
		{"hmac signed timestamp without header", verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"timestamp.body"}`, ""},
		{"hmac signed id without header", verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"id.timestamp.body","timestamp_header":"X-Ts"}`, ""},
		{"hmac bad timestamp format", verifier.KindHMAC, `{"signature_header":"X-Sig","payload":"timestamp.body","timestamp_header":"X-Ts","timestamp_format":"iso"}`, ""},
		{"hmac tolerance without timestamp", verifier.KindHMAC, `{"signature_header":"X-Sig","tolerance_seconds":60}`, ""},
		{"hmac format without timestamp", verifier.KindHMAC, `{"signature_header":"X-Sig","timestamp_format":"unix"}`, ""},
		{"hmac prefix with space", verifier.KindHMAC, `{"signature_header":"X-Sig","signature_prefix":"sha256 "}`, ""},
		{"hmac prefix too long", verifier.KindHMAC, `{"signature_header":"X-Sig","signature_prefix":"` + strings.Repeat("p", 33) + `"}`, ""},
		{"hmac unknown field", verifier.KindHMAC, `{"signature_header":"X-Sig","algorithm":"sha1"}`, ""},
	}
	r := verifier.NewDefaultRegistry()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := r.Lookup(tt.kind)
			require.NoError(t, err)
			got, err := f.ValidateOptions(json.RawMessage(tt.raw))
			if tt.want == "" {
				require.ErrorIs(t, err, verifier.ErrInvalidOptions)
				_, err = f.New(json.RawMessage(tt.raw))
				require.ErrorIs(t, err, verifier.ErrInvalidOptions)
				return
			}
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(got))
			// Normalizing is idempotent, and New accepts the stored form.
			again, err := f.ValidateOptions(got)
			require.NoError(t, err)
			require.Equal(t, string(got), string(again))
			_, err = f.New(got)
			require.NoError(t, err)
		})
	}
}
