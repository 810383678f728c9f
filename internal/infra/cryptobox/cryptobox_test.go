package cryptobox_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/cryptobox"
)

func newKey(t testing.TB, id string) cryptobox.Key {
	t.Helper()
	var raw [cryptobox.KeySize]byte
	_, err := rand.Read(raw[:])
	require.NoError(t, err)
	k, err := cryptobox.KeyFromBase64(id, base64.StdEncoding.EncodeToString(raw[:]))
	require.NoError(t, err)
	return k
}

func newBox(t testing.TB, primary cryptobox.Key, old ...cryptobox.Key) *cryptobox.Box {
	t.Helper()
	b, err := cryptobox.New(primary, old...)
	require.NoError(t, err)
	return b
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	box := newBox(t, newKey(t, ""))
	for _, plain := range [][]byte{nil, {}, []byte("whsec_abc"), bytes.Repeat([]byte{0xff}, 4096)} {
		ad := []byte("webhook_endpoints.secret/0191")
		sealed, err := box.Seal(plain, ad)
		require.NoError(t, err)
		require.Equal(t, byte(0x01), sealed[0], "version byte")
		got, err := box.Open(sealed, ad)
		require.NoError(t, err)
		require.Equal(t, len(plain), len(got))
		require.True(t, bytes.Equal(plain, got))
	}
}

func TestSealIsRandomized(t *testing.T) {
	t.Parallel()
	box := newBox(t, newKey(t, "k1"))
	a, err := box.Seal([]byte("same"), nil)
	require.NoError(t, err)
	b, err := box.Seal([]byte("same"), nil)
	require.NoError(t, err)
	require.NotEqual(t, a, b)
}

func TestFormatLayout(t *testing.T) {
	t.Parallel()
	box := newBox(t, newKey(t, "master-2026"))
	plain := []byte("secret")
	sealed, err := box.Seal(plain, nil)
	require.NoError(t, err)
	require.Equal(t, byte(1), sealed[0])
	require.Equal(t, byte(len("master-2026")), sealed[1])
	require.Equal(t, "master-2026", string(sealed[2:2+len("master-2026")]))
	require.Len(t, sealed, 2+len("master-2026")+12+len(plain)+16)
	id, err := cryptobox.KeyID(sealed)
	require.NoError(t, err)
	require.Equal(t, "master-2026", id)
}

func TestWrongAssociatedDataFails(t *testing.T) {
	t.Parallel()
	box := newBox(t, newKey(t, ""))
	// The secret of row A copied into row B must not open as row B's secret.
	sealed, err := box.Seal([]byte("whsec_rowA"), []byte("inbound_sources.secret/row-a"))
	require.NoError(t, err)

	tests := []struct {
		name string
		ad   []byte
	}{
		{"other row", []byte("inbound_sources.secret/row-b")},
		{"other column", []byte("webhook_endpoints.secret/row-a")},
		{"empty", nil},
		{"prefix", []byte("inbound_sources.secret/row-")},
		{"extended", []byte("inbound_sources.secret/row-aa")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := box.Open(sealed, tt.ad)
			require.ErrorIs(t, err, cryptobox.ErrCorrupt)
		})
	}
}

func TestTamperEveryByteFails(t *testing.T) {
	t.Parallel()
	k := newKey(t, "")
	box := newBox(t, k, newKey(t, "other"))
	ad := []byte("row-1")
	sealed, err := box.Seal([]byte("a secret worth protecting"), ad)
	require.NoError(t, err)

	for i := range sealed {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			tampered := bytes.Clone(sealed)
			tampered[i] ^= flip
			_, err := box.Open(tampered, ad)
			require.Error(t, err, "byte %d flipped by %#x opened", i, flip)
			require.True(t, errors.Is(err, cryptobox.ErrCorrupt) || errors.Is(err, cryptobox.ErrUnknownKey),
				"byte %d: unexpected error %v", i, err)
		}
	}
}

func TestTruncationFails(t *testing.T) {
	t.Parallel()
	box := newBox(t, newKey(t, ""))
	sealed, err := box.Seal([]byte("secret"), nil)
	require.NoError(t, err)
	for n := 0; n < len(sealed); n++ {
		_, err := box.Open(sealed[:n], nil)
		require.ErrorIs(t, err, cryptobox.ErrCorrupt, "truncated to %d bytes", n)
	}
	_, err = box.Open(append(bytes.Clone(sealed), 0), nil)
	require.ErrorIs(t, err, cryptobox.ErrCorrupt, "extended by one byte")
}

func TestUnknownKeyFails(t *testing.T) {
	t.Parallel()
	sealed, err := newBox(t, newKey(t, "gone")).Seal([]byte("secret"), nil)
	require.NoError(t, err)
	_, err = newBox(t, newKey(t, "current")).Open(sealed, nil)
	require.ErrorIs(t, err, cryptobox.ErrUnknownKey)
	require.NotErrorIs(t, err, cryptobox.ErrCorrupt)
}

func TestSameIDOtherKeyIsCorrupt(t *testing.T) {
	t.Parallel()
	sealed, err := newBox(t, newKey(t, "k")).Seal([]byte("secret"), nil)
	require.NoError(t, err)
	_, err = newBox(t, newKey(t, "k")).Open(sealed, nil)
	require.ErrorIs(t, err, cryptobox.ErrCorrupt)
}

func TestRotation(t *testing.T) {
	t.Parallel()
	oldKey, newK := newKey(t, ""), newKey(t, "")
	ad := []byte("inbound_sources.secret/42")
	sealed, err := newBox(t, oldKey).Seal([]byte("whsec_old"), ad)
	require.NoError(t, err)

	rotated := newBox(t, newK, oldKey)
	require.Equal(t, newK.ID, rotated.PrimaryKeyID())
	got, err := rotated.Open(sealed, ad)
	require.NoError(t, err)
	require.Equal(t, "whsec_old", string(got))
	require.True(t, rotated.NeedsReseal(sealed))

	resealed, err := rotated.Reseal(sealed, ad)
	require.NoError(t, err)
	require.False(t, rotated.NeedsReseal(resealed))
	id, err := cryptobox.KeyID(resealed)
	require.NoError(t, err)
	require.Equal(t, newK.ID, id)

	// Once every value is resealed the old key can go.
	got, err = newBox(t, newK).Open(resealed, ad)
	require.NoError(t, err)
	require.Equal(t, "whsec_old", string(got))

	// Reseal of a value already under the primary is a no-op.
	again, err := rotated.Reseal(resealed, ad)
	require.NoError(t, err)
	require.Equal(t, resealed, again)

	// Reseal authenticates: wrong associated data is refused.
	_, err = rotated.Reseal(sealed, []byte("other row"))
	require.ErrorIs(t, err, cryptobox.ErrCorrupt)
	_, err = rotated.Reseal(resealed, []byte("other row"))
	require.ErrorIs(t, err, cryptobox.ErrCorrupt)
}

func TestNeedsResealOnGarbage(t *testing.T) {
	t.Parallel()
	box := newBox(t, newKey(t, ""))
	require.False(t, box.NeedsReseal(nil))
	require.False(t, box.NeedsReseal([]byte{1, 2, 'a'}))
}

func TestKeyFromBase64(t *testing.T) {
	t.Parallel()
	var raw [32]byte
	for i := range raw {
		raw[i] = byte(i)
	}
	good := base64.StdEncoding.EncodeToString(raw[:])

	tests := []struct {
		name    string
		id, b64 string
		wantID  string
		wantErr string
	}{
		{name: "derived id", b64: good, wantID: cryptobox.DeriveKeyID(raw)},
		{name: "given id", id: "primary-1", b64: good, wantID: "primary-1"},
		{name: "trailing newline of a key file", b64: good + "\n", wantID: cryptobox.DeriveKeyID(raw)},
		{name: "31 bytes", b64: base64.StdEncoding.EncodeToString(raw[:31]), wantErr: "decodes to 31 bytes, want exactly 32"},
		{name: "33 bytes", b64: base64.StdEncoding.EncodeToString(append(raw[:], 0)), wantErr: "decodes to 33 bytes"},
		{name: "empty", b64: "", wantErr: "decodes to 0 bytes"},
		{name: "not base64", b64: "not base64!", wantErr: "not valid standard base64"},
		{name: "url alphabet", b64: strings.Repeat("_", 43) + "=", wantErr: "not valid standard base64"},
		{name: "bad id", id: "has space", b64: good, wantErr: "may contain only"},
		{name: "long id", id: strings.Repeat("a", 65), b64: good, wantErr: "1..64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := cryptobox.KeyFromBase64(tt.id, tt.b64)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantID, k.ID)
			require.Equal(t, raw, k.Secret)
		})
	}
}

func TestDeriveKeyID(t *testing.T) {
	t.Parallel()
	var zero [32]byte
	// sha256 of 32 zero bytes starts 66687aad.
	require.Equal(t, "66687aad", cryptobox.DeriveKeyID(zero))
}

func TestKeyNeverPrintsSecret(t *testing.T) {
	t.Parallel()
	var raw [32]byte
	copy(raw[:], "THIS-IS-THE-SECRET-KEY-MATERIAL!")
	k := cryptobox.Key{ID: "k1", Secret: raw}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, k)
		require.NotContains(t, out, "SECRET", verb)
		require.Contains(t, out, "k1", verb)
	}
}

func TestNewRejectsDuplicateIDs(t *testing.T) {
	t.Parallel()
	a := newKey(t, "same")
	_, err := cryptobox.New(a, newKey(t, "same"))
	require.ErrorContains(t, err, "given twice")
	_, err = cryptobox.New(cryptobox.Key{})
	require.ErrorContains(t, err, "key id")
}

func FuzzOpen(f *testing.F) {
	k := newKey(f, "fuzz")
	box := newBox(f, k)
	for _, plain := range []string{"", "x", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"} {
		sealed, err := box.Seal([]byte(plain), []byte("ad"))
		require.NoError(f, err)
		f.Add(sealed, []byte("ad"))
	}
	f.Add([]byte{}, []byte{})
	f.Add([]byte{1, 0}, []byte{})
	f.Add([]byte{1, 255}, []byte{})
	f.Add([]byte{2, 4, 'f', 'u', 'z', 'z'}, []byte{})

	f.Fuzz(func(t *testing.T, sealed, ad []byte) {
		plain, err := box.Open(sealed, ad)
		if err != nil {
			require.Nil(t, plain)
			require.True(t, errors.Is(err, cryptobox.ErrCorrupt) || errors.Is(err, cryptobox.ErrUnknownKey), "unexpected error %v", err)
			return
		}
		// Whatever opens must reseal to something that opens to the same bytes.
		again, err := box.Seal(plain, ad)
		require.NoError(t, err)
		back, err := box.Open(again, ad)
		require.NoError(t, err)
		require.True(t, bytes.Equal(plain, back))
	})
}
