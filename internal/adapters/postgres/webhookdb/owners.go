package webhookdb

// OwnersWithEndpoints is the query (events.OwnersQuery) of the owners, among
// $1, with an endpoint that is not deleted (enabled or not): the owners whose
// events webhook.fanout has work for. An owner without one gets nothing from
// a fan-out, neither a delivery nor a summary (Store.Endpoints lists exactly
// these endpoints), so no fan-out job is queued for its events: the relay
// asks it per batch, and an event batch asks it in the statement that writes
// the events.
const OwnersWithEndpoints = `SELECT DISTINCT owner_id FROM webhook_endpoints WHERE owner_id = ANY($1) AND deleted_at IS NULL`
