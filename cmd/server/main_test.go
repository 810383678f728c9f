package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeStopsAtOnceOnBadConfig: a bad DATABASE_URL or master key stops the
// process with one line naming the variable.
func TestServeStopsAtOnceOnBadConfig(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		wantVar string
	}{
		{"bad database url", map[string]string{"DATABASE_URL": "mysql://nope", "STANDMEET_MASTER_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}, "DATABASE_URL"},
		{"unreachable database", map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x?connect_timeout=2", "STANDMEET_MASTER_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}, "DATABASE_URL"},
		{"bad master key", map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x", "STANDMEET_MASTER_KEY": "c2hvcnQ="}, "STANDMEET_MASTER_KEY"},
		{"missing master key", map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "STANDMEET_MASTER_KEY"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"DATABASE_URL", "STANDMEET_MASTER_KEY", "STANDMEET_MASTER_KEY_FILE", "STANDMEET_ADDR"} {
				t.Setenv(k, c.env[k])
			}
			var out, errOut bytes.Buffer
			code := run([]string{"serve"}, nil, &out, &errOut)
			require.Equal(t, 1, code)
			lines := bytes.Split(bytes.TrimSpace(errOut.Bytes()), []byte("\n"))
			require.Len(t, lines, 1, "one clear line, got %q", errOut.String())
			require.Contains(t, errOut.String(), c.wantVar)
		})
	}
}

// TestHelpTouchesNoDatabase: help, -h and --help print the usage on stdout
// and exit 0 with no configuration at all; an unknown command prints it on
// stderr and exits 2, also before configuration is read.
func TestHelpTouchesNoDatabase(t *testing.T) {
	for _, k := range []string{"DATABASE_URL", "STANDMEET_MASTER_KEY", "STANDMEET_MASTER_KEY_FILE", "STANDMEET_ADDR"} {
		t.Setenv(k, "")
	}
	for _, arg := range []string{"help", "-h", "--help", "-help"} {
		t.Run(arg, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{arg}, nil, &out, &errOut)
			require.Equal(t, 0, code, errOut.String())
			require.Empty(t, errOut.String())
			require.Contains(t, out.String(), "standmeet serve")
			require.Contains(t, out.String(), "/admin")
		})
	}
	var out, errOut bytes.Buffer
	code := run([]string{"frobnicate"}, nil, &out, &errOut)
	require.Equal(t, 2, code)
	require.Empty(t, out.String())
	require.Contains(t, errOut.String(), `unknown command "frobnicate"`)
	require.Contains(t, errOut.String(), "usage:")
	require.NotContains(t, errOut.String(), "config:", "no configuration was read")
}
