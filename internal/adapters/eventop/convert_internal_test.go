package eventop

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/events"
)

// TestToEventRefusesUndecodableColumns: a stored data or fan-out value that
// does not decode fails the read with the event named, instead of showing
// the event without it.
func TestToEventRefusesUndecodableColumns(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	cases := []struct {
		name      string
		data, fan json.RawMessage
		wantErr   string
	}{
		{"both decode", json.RawMessage(`{"sku":"a"}`), json.RawMessage(`[]`), ""},
		{"data is not an object", json.RawMessage(`[1]`), nil, "stored data"},
		{"fan-out is not json", json.RawMessage(`{}`), json.RawMessage(`[`), "stored fan-out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ev, err := toEvent(events.Event{ID: id, Data: c.data, Fanout: c.fan})
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				require.ErrorContains(t, err, id.String())
				return
			}
			require.NoError(t, err)
			require.Equal(t, "a", ev.Data["sku"])
		})
	}
	_, err := toPage(events.Page{Events: []events.Event{{ID: id, Data: json.RawMessage(`"x"`)}}})
	require.ErrorContains(t, err, "stored data")
}
