package inbound

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestViewOfRefusesCorruptStoredOptions: options that do not decode fail the
// read instead of showing the source without them.
func TestViewOfRefusesCorruptStoredOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		options json.RawMessage
		wantErr bool
	}{
		{"object", json.RawMessage(`{"header":"X-Sig"}`), false},
		{"none stored", nil, false},
		{"not an object", json.RawMessage(`[1,2]`), true},
		{"not json", json.RawMessage(`{"header":`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := viewOf(Source{ID: uuid.New(), Options: c.options})
			if c.wantErr {
				require.ErrorContains(t, err, "stored options")
				return
			}
			require.NoError(t, err)
			if c.options != nil {
				require.Contains(t, v.Options, "header")
			}
		})
	}
}
