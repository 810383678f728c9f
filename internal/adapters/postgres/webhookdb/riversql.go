package webhookdb

import (
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// This file holds every SQL text of the adapter that names River's tables,
// columns or functions; each statement says what it reads that River's
// client (JobList, JobGet, JobRetry) cannot. None writes River's tables.
// River's schema is no contract of River's: riversql_test.go fails when
// River's version moves from riverVersionReviewed or a statement no longer
// plans against the migrated schema.

// riverVersionReviewed is the version of github.com/riverqueue/river whose
// schema every statement of this file was checked against.
const riverVersionReviewed = "v0.51.2"

// Fragments over river_job j, composed into the statements below.

// endpointJobs selects an endpoint's delivery jobs through River's GIN
// index on args.
const endpointJobs = `j.kind = 'webhook.deliver' AND j.args @> jsonb_build_object('endpoint_id', $1::text)`

// jobState is the state of river_job j as the delivery log shows it: a job
// River made available ahead of its scheduled_at (due within its
// scheduler's interval) still waits, so it reads as scheduled.
const jobState = `(CASE WHEN j.state = 'available' AND j.scheduled_at > now() THEN 'scheduled' ELSE j.state::text END)`

// deliveryColumns are the columns of a delivery-log row over river_job j,
// events ev and the latest attempt a, in scanDelivery's order.
const deliveryColumns = `j.id, (j.args->>'event_id')::uuid, COALESCE(ev.type, ''), ` + jobState + `,
  COALESCE(array_length(j.errors, 1), 0) > 0, j.attempt, ` + effectiveMaxAttempts + `,
  COALESCE(a.error, j.errors[array_upper(j.errors, 1)]->>'error'), j.attempted_at, j.created_at,
  j.scheduled_at, a.status_code, a.latency_ms, a.response, a.location,
  COALESCE((j.metadata->>'snoozes')::int, 0)`

// effectiveMaxAttempts is the attempt bound of river_job j's delivery: the
// endpoint's max_attempts when below River's (one primary-key probe).
const effectiveMaxAttempts = `LEAST(j.max_attempts, (SELECT ep.max_attempts FROM webhook_endpoints ep WHERE ep.id = (j.args->>'endpoint_id')::uuid))`

// endedByBound holds for a delivery cancelled at the endpoint's last
// attempt, which reads as failed.
const endedByBound = `(j.state = 'cancelled' AND j.attempt >= ` + effectiveMaxAttempts + `)`

// eventDeliveryColumns are deliveryColumns with the endpoint e's id, URL
// and state, in scanEventDeliveries' order.
const eventDeliveryColumns = deliveryColumns + `, e.id, e.url,
  CASE WHEN e.deleted_at IS NOT NULL THEN 'deleted' WHEN NOT e.enabled THEN 'disabled'
       WHEN e.failing_since IS NOT NULL THEN 'failing' ELSE 'enabled' END`

// latestAttempt joins a delivery's latest attempt as a.
const latestAttempt = `LEFT JOIN LATERAL (
  SELECT status_code, latency_ms, response, location, error FROM webhook_attempts
  WHERE job_id = j.id ORDER BY id DESC LIMIT 1) a ON true`

// statusStates is the condition on river_job j of each delivery status
// (webhook.StatusOf in SQL).
var statusStates = map[string]string{
	webhook.StatusDelivered: `j.state = 'completed'`,
	webhook.StatusSending:   `j.state = 'running'`,
	webhook.StatusWaiting:   `(` + jobState + ` IN ('available', 'pending') OR (` + jobState + ` = 'scheduled' AND COALESCE(array_length(j.errors, 1), 0) = 0))`,
	webhook.StatusRetrying:  `(j.state = 'retryable' OR (` + jobState + ` = 'scheduled' AND COALESCE(array_length(j.errors, 1), 0) > 0))`,
	webhook.StatusFailed:    `(j.state = 'discarded' OR ` + endedByBound + `)`,
	webhook.StatusCancelled: `(j.state = 'cancelled' AND NOT ` + endedByBound + `)`,
}

// The delivery log.

// listDeliveries reads a page of endpoint $1's delivery log in status
// (any when not one of webhook's), after job $2 oldest first when forward,
// else before it (0: from the newest), at most $3, of event type $4 (empty:
// any), created in [$5, $6). Not JobList: it joins each job to its event
// and latest attempt, filters by the event's type and shows the endpoint's
// attempt bound.
func listDeliveries(status string, forward bool) string {
	where := endpointJobs
	if c, ok := statusStates[status]; ok {
		where += " AND " + c
	}
	order := "j.id DESC"
	if forward {
		where += " AND j.id > $2"
		order = "j.id"
	} else {
		where += " AND ($2::bigint = 0 OR j.id < $2)"
	}
	return `SELECT ` + deliveryColumns + `
FROM river_job j
LEFT JOIN events ev ON ev.id = (j.args->>'event_id')::uuid
` + latestAttempt + `
WHERE ` + where + ` AND ($4::text = '' OR ev.type = $4)
  AND ($5::timestamptz IS NULL OR j.created_at >= $5) AND ($6::timestamptz IS NULL OR j.created_at < $6)
ORDER BY ` + order + `
LIMIT $3`
}

// getDelivery reads endpoint $1's delivery job $2 with its event. Not
// JobGet: it checks the job is the endpoint's and joins its event and
// latest attempt.
const getDelivery = `SELECT ` + deliveryColumns + `, ev.id, COALESCE(ev.subject, ''),
  COALESCE(ev.occurred_at, now()), COALESCE(ev.data, '{}'::jsonb)
FROM river_job j
LEFT JOIN events ev ON ev.id = (j.args->>'event_id')::uuid
` + latestAttempt + `
WHERE ` + endpointJobs + ` AND j.id = $2`

// retryState reads endpoint $1's delivery job $2's state as the log shows
// it and locks the job. Not JobGet: that takes no lock in our transaction.
const retryState = `SELECT ` + jobState + `
FROM river_job j WHERE ` + endpointJobs + ` AND j.id = $2 FOR UPDATE`

// sleepingJobs locks those of the delivery jobs $1 still snoozed
// (scheduled, or available ahead of their time), for Wake's JobRetryTx in
// the same transaction. Not JobGet: the lock keeps River from running one
// between the read and the retry, so a running or finished job is never
// retried; one River is fetching is skipped.
const sleepingJobs = `SELECT j.id FROM river_job j
WHERE j.id = ANY($1::bigint[]) AND j.kind = 'webhook.deliver'
  AND j.state IN ('scheduled', 'available') AND j.scheduled_at > now()
ORDER BY j.id FOR UPDATE SKIP LOCKED`

// runningJobs reads which of the jobs $1 River shows running, for Wake.
const runningJobs = `SELECT id FROM river_job WHERE id = ANY($1::bigint[]) AND state = 'running'`

// listByEvent reads event $1's delivery jobs to endpoints of owner $2
// (deleted ones included), at most $3. Not JobList: it joins each job to
// its endpoint, its event and its latest attempt.
const listByEvent = `SELECT ` + eventDeliveryColumns + `
FROM river_job j
JOIN webhook_endpoints e ON e.id = (j.args->>'endpoint_id')::uuid AND e.owner_id = $2
LEFT JOIN events ev ON ev.id = (j.args->>'event_id')::uuid
` + latestAttempt + `
WHERE j.kind = 'webhook.deliver' AND j.args @> jsonb_build_object('event_id', $1::text)
ORDER BY j.id
LIMIT $3`

// latestByEvents reads the latest job of each (event of $1, endpoint of
// owner $2). Not JobList: it takes the latest job per endpoint of many
// events and joins our endpoints.
const latestByEvents = `SELECT ` + eventDeliveryColumns + `
FROM unnest($1::uuid[]) WITH ORDINALITY x(event_id, n)
CROSS JOIN LATERAL (
  SELECT DISTINCT ON (k.args->>'endpoint_id') k.* FROM river_job k
  WHERE k.kind = 'webhook.deliver' AND k.args @> jsonb_build_object('event_id', x.event_id::text)
  ORDER BY k.args->>'endpoint_id', k.id DESC) j
JOIN webhook_endpoints e ON e.id = (j.args->>'endpoint_id')::uuid AND e.owner_id = $2
LEFT JOIN events ev ON ev.id = x.event_id
` + latestAttempt + `
ORDER BY x.n, j.id`

// failedDeliveries reads endpoint $1's discarded or cancelled deliveries
// whose (endpoint, event) holds no other job in River's unique states, with
// their events. Not JobList: it tests each job's unique-key siblings with
// River's bitmask function, which the client does not expose.
const failedDeliveries = `SELECT f.id, f.state, ev.id, ev.owner_id, ev.type, ev.subject, ev.occurred_at, ev.data
FROM (SELECT DISTINCT ON (j.unique_key) j.id, j.state::text AS state, (j.args->>'event_id')::uuid AS event_id FROM river_job j
      WHERE ` + endpointJobs + ` AND j.state IN ('discarded', 'cancelled')
        AND NOT EXISTS (
          SELECT 1 FROM river_job k
          WHERE k.unique_key = j.unique_key AND k.id <> j.id AND k.unique_states IS NOT NULL
            AND river_job_state_in_bitmask(k.unique_states, k.state))
      ORDER BY j.unique_key, j.id DESC) f
LEFT JOIN events ev ON ev.id = f.event_id
ORDER BY f.id`

// The delivery lanes and the metrics.

// keepLanes renews lane $1 until now() + $2 and lists the lapsed lanes,
// whether a job is left in each and whether it may be forgotten ($3). Not
// JobList: it tests every lapsed lane for live jobs in one statement.
const keepLanes = `WITH renew AS (
  INSERT INTO webhook_lanes (lane, alive_until) SELECT $1, now() + $2::interval WHERE $1::text <> ''
  ON CONFLICT (lane) DO UPDATE SET alive_until = EXCLUDED.alive_until
  RETURNING lane)
SELECT l.lane,
  EXISTS (SELECT 1 FROM river_job j WHERE j.queue = l.lane
          AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled')),
  l.alive_until < now() - $3::interval
FROM webhook_lanes l WHERE l.alive_until < now() AND l.lane <> $1`

// stateSQL counts, each count a range of River's (state, queue, …) fetch
// index over the webhooks queue and the delivery lanes. Not JobList: it
// counts by state, where the client lists jobs.
const stateSQL = `SELECT
  (SELECT count(*) FROM webhook_endpoints WHERE enabled AND failing_since IS NOT NULL),
  (SELECT count(*) FROM webhook_endpoints WHERE NOT enabled AND deleted_at IS NULL),
  (SELECT count(*) FROM river_job WHERE state IN ('available', 'scheduled', 'pending') AND ` + deliveryQueues + `),
  (SELECT count(*) FROM river_job WHERE state = 'running' AND ` + deliveryQueues + `),
  (SELECT count(*) FROM river_job WHERE state = 'retryable' AND ` + deliveryQueues + `),
  (SELECT count(*) FROM river_job WHERE state IN ('discarded', 'cancelled') AND ` + deliveryQueues + `)`

// deliveryQueues matches a job of the webhooks queue or of a delivery lane.
const deliveryQueues = `(queue = 'webhooks' OR queue LIKE 'webhooks\_%')`
