package standardwebhooks_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// v1aEntries returns the decoded v1a signatures of a header value, read
// without the package under test.
func v1aEntries(t *testing.T, header string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, e := range strings.Split(header, " ") {
		v, sig, ok := strings.Cut(e, ",")
		if !ok || v != "v1a" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(sig)
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

func publicOf(t *testing.T, whpk string) ed25519.PublicKey {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whpk, "whpk_"))
	require.NoError(t, err)
	require.Len(t, b, ed25519.PublicKeySize)
	return b
}

func TestV1aVerifiesWithCryptoEd25519(t *testing.T) {
	t.Parallel()
	secret, public, err := standardwebhooks.NewSigningKey()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(secret, "whsk_"))
	require.True(t, strings.HasPrefix(public, "whpk_"))
	k, err := standardwebhooks.ParseKey(secret)
	require.NoError(t, err)
	require.True(t, k.Asymmetric())
	require.Equal(t, public, k.PublicKey())

	ts := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	header := standardwebhooks.SignKeys([]standardwebhooks.Key{k}, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body)
	sigs := v1aEntries(t, header)
	require.Len(t, sigs, 1)
	pub := publicOf(t, public)
	msg := []byte("msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330." + string(body))
	require.True(t, ed25519.Verify(pub, msg, sigs[0]))
	require.True(t, standardwebhooks.VerifyV1a(pub, header, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body))

	for i := range msg {
		changed := append([]byte(nil), msg...)
		changed[i] ^= 0x01
		require.False(t, ed25519.Verify(pub, changed, sigs[0]), "byte %d changed", i)
	}
	changedSig := append([]byte(nil), sigs[0]...)
	changedSig[10] ^= 0x80
	require.False(t, ed25519.Verify(pub, msg, changedSig))
	require.False(t, standardwebhooks.VerifyV1a(pub, header, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265331", body))
}

func TestRotationSignsWithBothKeys(t *testing.T) {
	t.Parallel()
	oldSecret, oldPublic, err := standardwebhooks.NewSigningKey()
	require.NoError(t, err)
	newSecret, newPublic, err := standardwebhooks.NewSigningKey()
	require.NoError(t, err)
	var keys []standardwebhooks.Key
	for _, s := range []string{newSecret, oldSecret} {
		k, err := standardwebhooks.ParseKey(s)
		require.NoError(t, err)
		keys = append(keys, k)
	}
	ts := time.Unix(1700000000, 0)
	body := []byte(`{"a":1}`)
	header := standardwebhooks.SignKeys(keys, "evt", ts, body)
	sigs := v1aEntries(t, header)
	require.Len(t, sigs, 2)
	msg := []byte("evt.1700000000." + string(body))
	require.True(t, ed25519.Verify(publicOf(t, newPublic), msg, sigs[0]))
	require.True(t, ed25519.Verify(publicOf(t, oldPublic), msg, sigs[1]))
	require.True(t, standardwebhooks.VerifyV1a(publicOf(t, oldPublic), header, "evt", "1700000000", body))
	other, _, err := standardwebhooks.NewSigningKey()
	require.NoError(t, err)
	ko, err := standardwebhooks.ParseKey(other)
	require.NoError(t, err)
	require.False(t, standardwebhooks.VerifyV1a(publicOf(t, ko.PublicKey()), header, "evt", "1700000000", body))
}

func TestParseKeyKeepsV1(t *testing.T) {
	t.Parallel()
	k, err := standardwebhooks.ParseKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	require.False(t, k.Asymmetric())
	require.Empty(t, k.PublicKey())
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		k.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`)))
}

func TestParseKeyRefuses(t *testing.T) {
	t.Parallel()
	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	mismatched := append([]byte(nil), priv...)
	mismatched[40] ^= 1
	for name, s := range map[string]string{
		"not base64":      "whsk_!!!",
		"short":           "whsk_" + base64.StdEncoding.EncodeToString(make([]byte, 31)),
		"long":            "whsk_" + base64.StdEncoding.EncodeToString(make([]byte, 65)),
		"halves disagree": "whsk_" + base64.StdEncoding.EncodeToString(mismatched),
		"short hmac":      "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 5)),
	} {
		_, err := standardwebhooks.ParseKey(s)
		require.ErrorIs(t, err, standardwebhooks.ErrInvalidSecret, name)
		require.NotContains(t, err.Error(), s[5:], name)
	}
	seed, err := standardwebhooks.ParseKey("whsk_" + base64.StdEncoding.EncodeToString(priv.Seed()))
	require.NoError(t, err)
	require.Equal(t, "whpk_"+base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)), seed.PublicKey())
}

func TestParsePublicKey(t *testing.T) {
	t.Parallel()
	_, public, err := standardwebhooks.NewSigningKey()
	require.NoError(t, err)
	_, err = standardwebhooks.ParsePublicKey(public)
	require.NoError(t, err)
	for _, s := range []string{"", "whpk_", strings.TrimPrefix(public, "whpk_"), "whpk_" + base64.StdEncoding.EncodeToString(make([]byte, 31))} {
		_, err := standardwebhooks.ParsePublicKey(s)
		require.True(t, errors.Is(err, standardwebhooks.ErrInvalidSecret), s)
	}
}

// FuzzVerifyV1a checks that no signature header verifies for a message it
// was not made for, and that parsing arbitrary keys never panics.
func FuzzVerifyV1a(f *testing.F) {
	secret, public, err := standardwebhooks.NewSigningKey()
	if err != nil {
		f.Fatal(err)
	}
	k, err := standardwebhooks.ParseKey(secret)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := standardwebhooks.ParsePublicKey(public)
	if err != nil {
		f.Fatal(err)
	}
	good := k.Sign("evt", time.Unix(1700000000, 0), []byte("{}"))
	f.Add(good, "evt", "1700000000", "{}")
	f.Add("v1a,AAAA v1,BBBB", "evt", "1", "x")
	f.Add(secret, "e", "2", "")
	f.Fuzz(func(t *testing.T, header, id, ts, body string) {
		if pk, err := standardwebhooks.ParseKey(header); err == nil && pk.Asymmetric() {
			// Any key that parses signs what its own public key verifies.
			p, err := standardwebhooks.ParsePublicKey(pk.PublicKey())
			require.NoError(t, err)
			require.True(t, standardwebhooks.VerifyV1a(p, pk.Sign("evt", time.Unix(1, 0), []byte(body)), "evt", "1", []byte(body)))
		}
		ok := standardwebhooks.VerifyV1a(pub, header, id, ts, []byte(body))
		if ok && !(id == "evt" && ts == "1700000000" && body == "{}") {
			// ed25519 signatures bind the exact message.
			t.Fatalf("%q verified for %q.%q.%q", header, id, ts, body)
		}
	})
}
