package config

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const goodKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func base() map[string]string {
	return map[string]string{"DATABASE_URL": "postgres://u@127.0.0.1:5432/db", "STANDMEET_MASTER_KEY": goodKey}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(base()), true)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", c.Addr)
	require.Equal(t, "json", c.LogFormat)
	require.Equal(t, 30*24*time.Hour, c.EventRetention)
	require.Len(t, c.MasterKey, 32)
	require.Empty(t, c.EgressAllow)
	require.Empty(t, c.TrustedProxies, "no proxy is trusted unless configured")
	require.True(t, c.WebhookLanes, "each process works its own delivery lane")
	require.Equal(t, 250*time.Millisecond, c.RiverFetchPollInterval)
}

func TestLoadNamesTheBadVariable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, variable, value, wantVar string
	}{
		{"no database", "DATABASE_URL", "", "DATABASE_URL"},
		{"bad database", "DATABASE_URL", "mysql://x", "DATABASE_URL"},
		{"no key", "STANDMEET_MASTER_KEY", "", "STANDMEET_MASTER_KEY"},
		{"short key", "STANDMEET_MASTER_KEY", "AAEC", "STANDMEET_MASTER_KEY"},
		{"not base64", "STANDMEET_MASTER_KEY", "%%%", "STANDMEET_MASTER_KEY"},
		{"bad addr", "STANDMEET_ADDR", "8080", "STANDMEET_ADDR"},
		{"bad allow", "STANDMEET_EGRESS_ALLOW", "127.0.0.0/8,nope", "STANDMEET_EGRESS_ALLOW"},
		{"bad proxies", "STANDMEET_TRUSTED_PROXIES", "10.0.0.1/8", "STANDMEET_TRUSTED_PROXIES"},
		{"bad log", "STANDMEET_LOG", "xml", "STANDMEET_LOG"},
		{"bad retention", "STANDMEET_EVENT_RETENTION", "-3d", "STANDMEET_EVENT_RETENTION"},
		{"bad workers", "STANDMEET_RIVER_MAX_WORKERS", "0", "STANDMEET_RIVER_MAX_WORKERS"},
		{"bad cooldown", "STANDMEET_RIVER_FETCH_COOLDOWN", "fast", "STANDMEET_RIVER_FETCH_COOLDOWN"},
		{"bad fetch poll", "STANDMEET_RIVER_FETCH_POLL_INTERVAL", "0s", "STANDMEET_RIVER_FETCH_POLL_INTERVAL"},
		{"fetch poll under the cooldown", "STANDMEET_RIVER_FETCH_POLL_INTERVAL", "5ms", "STANDMEET_RIVER_FETCH_POLL_INTERVAL"},
		{"rescue shorter than the job timeout", "STANDMEET_RIVER_RESCUE_AFTER", "5s", "STANDMEET_RIVER_RESCUE_AFTER"},
		{"bad endpoint limit", "STANDMEET_WEBHOOK_MAX_ENDPOINTS", "0", "STANDMEET_WEBHOOK_MAX_ENDPOINTS"},
		{"bad publish rate", "STANDMEET_PUBLISH_RATE", "0", "STANDMEET_PUBLISH_RATE"},
		{"bad publish bytes rate", "STANDMEET_PUBLISH_BYTES_RATE", "lots", "STANDMEET_PUBLISH_BYTES_RATE"},
		{"debug address off the machine", "STANDMEET_DEBUG_ADDR", "0.0.0.0:6060", "STANDMEET_DEBUG_ADDR"},
		{"debug address by name", "STANDMEET_DEBUG_ADDR", "localhost:6060", "STANDMEET_DEBUG_ADDR"},
		{"lanes neither on nor off", "STANDMEET_WEBHOOK_LANES", "sometimes", "STANDMEET_WEBHOOK_LANES"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := base()
			m[c.variable] = c.value
			_, err := Load(env(m), true)
			var ce *Error
			require.True(t, errors.As(err, &ce), "got %v", err)
			require.Equal(t, c.wantVar, ce.Var)
			require.Contains(t, err.Error(), c.wantVar)
		})
	}
}

func TestLoadParsesValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(goodKey+"\n"), 0o600))
	m := base()
	delete(m, "STANDMEET_MASTER_KEY")
	m["STANDMEET_MASTER_KEY_FILE"] = keyFile
	m["STANDMEET_EGRESS_ALLOW"] = "127.0.0.0/8, ::1"
	m["STANDMEET_TRUSTED_PROXIES"] = "10.0.0.0/8 192.0.2.7"
	m["STANDMEET_EVENT_RETENTION"] = "7d"
	m["STANDMEET_LOG"] = "console"
	m["STANDMEET_WEBHOOK_LANES"] = "false"
	m["STANDMEET_RIVER_FETCH_POLL_INTERVAL"] = "1s"
	c, err := Load(env(m), true)
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}, c.EgressAllow)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")}, c.TrustedProxies)
	require.Equal(t, 7*24*time.Hour, c.EventRetention)
	require.Equal(t, "console", c.LogFormat)
	require.False(t, c.WebhookLanes)
	require.Equal(t, time.Second, c.RiverFetchPollInterval)

	m["STANDMEET_MASTER_KEY"] = goodKey
	_, err = Load(env(m), true)
	require.Error(t, err, "both key variables set must be refused")
}
