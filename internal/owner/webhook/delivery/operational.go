package delivery

import (
	"encoding/json"
	"strings"

	"github.com/google/uuid"
)

// operationalPrefix starts the types of the operational events about one
// endpoint (webhook.endpoint.failing, .recovered, .disabled).
const operationalPrefix = "webhook.endpoint."

// aboutItself reports whether ev is an operational event about ep: such an
// event goes to the owner's other endpoints (a chat or pager), never to the
// endpoint it is about, which is failing or disabled, and whose own
// delivery would feed the failure it reports.
func aboutItself(ep Endpoint, ev Event) bool {
	if !strings.HasPrefix(ev.Type, operationalPrefix) {
		return false
	}
	var d struct {
		EndpointID uuid.UUID `json:"endpoint_id"`
	}
	// Data that does not name an endpoint is about none.
	if json.Unmarshal(ev.Data, &d) != nil {
		return false
	}
	return d.EndpointID == ep.ID
}
