package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/config"
)

func newMasterKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(k)
}

// TestRotateMasterKeyReseals: secrets sealed under the old master key are
// re-sealed under the new one, after which the old key is no longer needed.
// Not parallel: it sets the process environment for the CLI.
func TestRotateMasterKeyReseals(t *testing.T) {
	oldKey, newKey := newMasterKey(t), newMasterKey(t)
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_MASTER_KEY": oldKey}})
	_, apiKey := ts.newOwner(t)
	status, body := ts.do(t, http.MethodPost, "/api/admin/webhooks", apiKey, `{"url":"https://hooks.example.com/in","event_types":["code.*"],"headers":{"Authorization":"Bearer rotate-me"}}`)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = ts.do(t, http.MethodPost, "/api/admin/inbound-sources", apiKey, `{"name":"sender","verifier":"standard-webhooks"}`)
	require.Equal(t, http.StatusCreated, status, body)
	ts.Stop()

	rotate := func() string {
		t.Setenv("DATABASE_URL", ts.DBURL)
		t.Setenv("STANDMEET_MASTER_KEY", newKey)
		t.Setenv("STANDMEET_MASTER_KEY_OLD", oldKey)
		t.Setenv("STANDMEET_MASTER_KEY_FILE", "")
		var out, errOut bytes.Buffer
		code := run([]string{"rotate-master-key"}, nil, &out, &errOut)
		require.Equal(t, 0, code, errOut.String())
		return out.String()
	}
	require.Contains(t, rotate(), "re-sealed 3 secret(s)", "the endpoint secret, the source secret and the header value")
	require.Contains(t, rotate(), "re-sealed 0 secret(s)", "a second run has nothing left to do")

	// Every sealed value now opens with the new key alone.
	newOnly, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": ts.DBURL, "STANDMEET_MASTER_KEY": newKey}[k]
	}, true)
	require.NoError(t, err)
	box, err := provideBox(newOnly)
	require.NoError(t, err)
	opened := 0
	for _, sc := range sealedColumns() {
		rows, err := ts.App.Pool.Query(t.Context(), `SELECT id, `+sc.column+` FROM `+sc.table+` WHERE `+sc.column+` IS NOT NULL`)
		require.NoError(t, err)
		for rows.Next() {
			var id uuid.UUID
			var sealed []byte
			require.NoError(t, rows.Scan(&id, &sealed))
			_, err := box.Open(sealed, id[:])
			require.NoError(t, err, "%s.%s of %s", sc.table, sc.column, id)
			opened++
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	require.Equal(t, 2, opened)

	// The custom header value too.
	var id uuid.UUID
	var value string
	require.NoError(t, ts.App.Pool.QueryRow(t.Context(), `SELECT id, headers->>'Authorization' FROM webhook_endpoints`).Scan(&id, &value))
	sealed, ok := domain.OpenSealedText(value)
	require.True(t, ok, value)
	plain, err := box.Open(sealed, id[:])
	require.NoError(t, err)
	require.Equal(t, "Bearer rotate-me", string(plain))
}
