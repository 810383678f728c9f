package webhookdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/standmeet/standmeet/internal/adapters/postgres/batch"
	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Store is the storage of webhook.fanout and webhook.deliver.
type Store struct {
	pool *pgxpool.Pool
	// statements runs the take and the finishing statement (see
	// statementConns).
	statements *pgxpool.Pool
	river      *riverjob.Inserter

	// Calls that arrive together share one statement (batch.Group).
	finishes *batch.Group[delivery.Finish, delivery.Settled]
	events   *batch.Group[uuid.UUID, *delivery.Event]
	takes    *batch.Group[takeReq, *delivery.Claim]
	// healthRec records the events of the health changes of the finishing
	// statements (RecordHealthWith); nil records none.
	healthRec uow.Recorder
}

var (
	_ delivery.FanoutStore  = (*Store)(nil)
	_ delivery.DeliverStore = (*Store)(nil)
)

// NewStore returns a Store; river (an insert-only client) inserts the
// deliveries. The Store opens a pool of its own for the take and the
// finishing statement (statementConns connections to pool's database);
// Close closes it.
func NewStore(pool *pgxpool.Pool, river *riverjob.Inserter) (*Store, error) {
	cfg := pool.Config()
	cfg.MaxConns, cfg.MinConns = statementConns, 0
	statements, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open the delivery statements' pool: %w", err)
	}
	s := &Store{pool: pool, statements: statements, river: river}
	s.events = &batch.Group[uuid.UUID, *delivery.Event]{Run: s.readEvents, MaxFlights: 2}
	// Takes go one per endpoint per statement: two takers of one endpoint
	// in one statement would see the same free slot. One statement is in
	// flight, so the takes that arrive meanwhile share the next.
	s.takes = &batch.Group[takeReq, *delivery.Claim]{
		Run:        s.takeRuns,
		Key:        func(r takeReq) (any, bool) { return r.endpointID, true },
		MaxFlights: 1,
	}
	// One finishing statement is in flight, so two never wait on each
	// other's rows. Runs that settle their endpoint go one per endpoint per
	// statement: two updates of one endpoint row cannot share a statement.
	s.finishes = &batch.Group[delivery.Finish, delivery.Settled]{
		Run: s.finishRuns,
		Key: func(f delivery.Finish) (any, bool) {
			return f.EndpointID, f.Settle != delivery.SettleNone
		},
		MaxFlights: 1,
	}
	return s, nil
}

// Close closes the delivery statements' pool; the pool given to NewStore
// is its owner's to close.
func (s *Store) Close() { s.statements.Close() }

// Event loads an event; delivery.ErrGone when retention pruned it. Reads
// that arrive together share one statement.
func (s *Store) Event(ctx context.Context, id uuid.UUID) (delivery.Event, error) {
	ev, err := s.events.Do(ctx, id)
	if err != nil {
		return delivery.Event{}, fmt.Errorf("read event %s: %w", id, err)
	}
	if ev == nil {
		return delivery.Event{}, fmt.Errorf("event %s: %w", id, delivery.ErrGone)
	}
	return *ev, nil
}

// readEvents reads the events of ids, nil for those retention pruned.
func (s *Store) readEvents(ctx context.Context, ids []uuid.UUID) ([]*delivery.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner_id, type, subject, occurred_at, data FROM events WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	found := make(map[uuid.UUID]*delivery.Event, len(ids))
	var ev delivery.Event
	if _, err := pgx.ForEachRow(rows, []any{&ev.ID, &ev.OwnerID, &ev.Type, &ev.Subject, &ev.OccurredAt, &ev.Data}, func() error {
		e := ev
		found[e.ID] = &e
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]*delivery.Event, len(ids))
	for i, id := range ids {
		out[i] = found[id]
	}
	return out, nil
}

// Endpoints lists the owner's endpoints that are not deleted, enabled or
// not, without secrets.
func (s *Store) Endpoints(ctx context.Context, ownerID uuid.UUID) ([]delivery.Endpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner_id, url, event_types, embed_id, max_in_flight, enabled, failing_since, failed_at, filter
FROM webhook_endpoints WHERE owner_id = $1 AND deleted_at IS NULL`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("list enabled endpoints: %w", err)
	}
	defer rows.Close()
	var out []delivery.Endpoint
	for rows.Next() {
		var (
			e   delivery.Endpoint
			mif int16
		)
		if err := rows.Scan(&e.ID, &e.OwnerID, &e.URL, &e.EventTypes, &e.EmbedID, &mif, &e.Enabled, &e.FailingSince, &e.FailedAt, &e.Filter); err != nil {
			return nil, fmt.Errorf("list enabled endpoints: %w", err)
		}
		e.MaxInFlight = int(mif)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list enabled endpoints: %w", err)
	}
	return out, nil
}

// WaitMetadataKey, in a delivery job's River metadata, says why a
// delivery inserted scheduled waits: {"reason": "cooling_down", "until":
// <RFC 3339>} for a failing endpoint's cooldown. It describes the wait at
// insertion: it holds while the job is still scheduled.
const WaitMetadataKey = "standmeet_wait"

// waitMetadata is the metadata of a delivery d that waits for d.Wait.
func waitMetadata(d delivery.Delivery) ([]byte, error) {
	type wait struct {
		Reason delivery.Reason `json:"reason"`
		Until  time.Time       `json:"until"`
	}
	return json.Marshal(map[string]wait{WaitMetadataKey: {Reason: d.Wait, Until: d.ScheduledAt.UTC()}})
}

// recordSummary writes an event's fan-out summary: one row per event,
// replaced when the fan-out runs again.
const recordSummary = `INSERT INTO webhook_fanouts (event_id, reasons) VALUES ($1, $2)
ON CONFLICT (event_id) DO UPDATE SET reasons = EXCLUDED.reasons, recorded_at = now()`

// lanesOf picks the lane of each endpoint of $1: of the alive lanes, the
// one ranking first for the endpoint (rendezvous hashing, so a lane that
// comes or goes moves only the endpoints it ranks first for), or NULL when
// no lane is alive.
const lanesOf = `SELECT e, (SELECT l.lane FROM webhook_lanes l WHERE l.alive_until > now()
  ORDER BY hashtext(e::text || l.lane) DESC, l.lane LIMIT 1)
FROM unnest($1::uuid[]) AS e`

// lanes returns the lane of each endpoint of ids that has one alive.
func lanes(ctx context.Context, q pgxQuerier, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	rows, err := q.Query(ctx, lanesOf, ids)
	if err != nil {
		return nil, fmt.Errorf("pick delivery lanes: %w", err)
	}
	out := make(map[uuid.UUID]string, len(ids))
	var (
		id   uuid.UUID
		lane *string
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &lane}, func() error {
		if lane != nil {
			out[id] = *lane
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("pick delivery lanes: %w", err)
	}
	return out, nil
}

// Enqueue inserts the deliveries in one transaction; River skips those
// whose (endpoint, event) job exists already. A delivery due now goes on
// its endpoint's lane (lanesOf, read in the same transaction), or on the
// shared webhooks queue when no lane is alive; a cooled-down one on the
// shared queue, which every process works when it comes due.
func (s *Store) Enqueue(ctx context.Context, ds []delivery.Delivery, sum delivery.Summary) ([]delivery.Enqueued, error) {
	var summary []byte
	if !sum.Empty() {
		var err error
		if summary, err = json.Marshal(sum); err != nil {
			return nil, fmt.Errorf("encode fan-out summary of event %s: %w", sum.EventID, err)
		}
		if len(ds) == 0 {
			// Nothing to queue: the summary alone, one statement.
			if _, err := s.pool.Exec(ctx, recordSummary, sum.EventID, summary); err != nil {
				return nil, fmt.Errorf("record fan-out summary of event %s: %w", sum.EventID, err)
			}
			return nil, nil
		}
	}
	var now []uuid.UUID
	for _, d := range ds {
		if d.ScheduledAt.IsZero() {
			now = append(now, d.EndpointID)
		}
	}
	var out []delivery.Enqueued
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		lane := map[uuid.UUID]string{}
		if len(now) > 0 {
			var err error
			if lane, err = lanes(ctx, tx, now); err != nil {
				return err
			}
		}
		params := make([]river.InsertManyParams, len(ds))
		for i, d := range ds {
			p := river.InsertManyParams{Args: riverjob.WebhookDeliverArgs{EndpointID: d.EndpointID, EventID: d.EventID}}
			switch {
			case !d.ScheduledAt.IsZero():
				p.InsertOpts = &river.InsertOpts{ScheduledAt: d.ScheduledAt}
				if d.Wait != "" {
					md, err := waitMetadata(d)
					if err != nil {
						return err
					}
					p.InsertOpts.Metadata = md
				}
			case lane[d.EndpointID] != "":
				p.InsertOpts = &river.InsertOpts{Queue: lane[d.EndpointID]}
			}
			params[i] = p
		}
		res, err := s.river.InsertManyTx(ctx, tx, params)
		if err != nil {
			return err
		}
		out = make([]delivery.Enqueued, len(res))
		for i, r := range res {
			out[i] = delivery.Enqueued{JobID: r.Job.ID, Duplicate: r.UniqueSkippedAsDuplicate}
		}
		if summary != nil {
			if _, err := tx.Exec(ctx, recordSummary, sum.EventID, summary); err != nil {
				return fmt.Errorf("record fan-out summary: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue %d deliveries: %w", len(ds), err)
	}
	return out, nil
}

// deliverEndpointColumns are the columns of webhook_endpoints (alias e) that
// scanDeliverEndpoint reads, in its order.
const deliverEndpointColumns = `e.id, e.owner_id, e.url, e.event_types, e.embed_id, e.headers, e.max_in_flight, e.enabled,
  e.failing_since, e.failed_at, e.secret_enc, e.prev_secret_enc, e.prev_secret_until, e.timeout_seconds, e.max_attempts,
  coalesce(e.rate_limit_per_second, 0) AS rate_limit_per_second, coalesce(e.rate_limit_burst, 0) AS rate_limit_burst`

// scanDeliverEndpoint scans a row's first columns into before, then
// deliverEndpointColumns into ep, then its remaining columns into extra.
func scanDeliverEndpoint(row pgx.Row, before []any, ep *delivery.Endpoint, extra ...any) error {
	var (
		headers                []byte
		mif, timeout, attempts int16
		rate, burst            int32
	)
	dest := append(append(before, &ep.ID, &ep.OwnerID, &ep.URL, &ep.EventTypes, &ep.EmbedID, &headers, &mif, &ep.Enabled,
		&ep.FailingSince, &ep.FailedAt, &ep.SecretSealed, &ep.PrevSecretSealed, &ep.PrevSecretUntil, &timeout, &attempts, &rate, &burst), extra...)
	if err := row.Scan(dest...); err != nil {
		return err
	}
	ep.MaxInFlight, ep.TimeoutSeconds, ep.MaxAttempts = int(mif), int(timeout), int(attempts)
	ep.RatePerSecond, ep.RateBurst = int(rate), int(burst)
	if err := json.Unmarshal(headers, &ep.Headers); err != nil {
		return fmt.Errorf("decode headers of endpoint %s: %w", ep.ID, err)
	}
	return nil
}

// takeMany is the take of many runs, one row of the unnest per run
// (endpoint $1, event $2, token $3, ttl in seconds $4): for each, it
// reads the endpoint and the event and takes the endpoint's first free
// slot among the first max_in_flight. The slot is locked with SKIP LOCKED
// (a concurrent taker moves on to another slot or finds none), and
// PostgreSQL re-checks busy_until on the locked row, so two takers never
// hold one slot. No lease is taken for a disabled endpoint or a pruned
// event. Runs of one endpoint never share the statement (see NewStore).
var takeMany = `WITH i AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::float8[])
    WITH ORDINALITY AS i(endpoint_id, event_id, token, ttl, ord)
), ep AS (
  SELECT i.ord, ` + deliverEndpointColumns + `
  FROM i JOIN webhook_endpoints e ON e.id = i.endpoint_id
), ev AS (
  SELECT i.ord, v.id, v.owner_id, v.type, v.subject, v.occurred_at, v.data
  FROM i JOIN events v ON v.id = i.event_id
), free AS (
  SELECT i.ord, f.endpoint_id, f.slot
  FROM i JOIN ep ON ep.ord = i.ord
  CROSS JOIN LATERAL (
    SELECT l.endpoint_id, l.slot FROM webhook_endpoint_leases l
    WHERE l.endpoint_id = i.endpoint_id AND l.slot < ep.max_in_flight AND l.busy_until < now()
    ORDER BY l.slot LIMIT 1
    FOR UPDATE SKIP LOCKED
  ) f
  WHERE ep.enabled AND EXISTS (SELECT 1 FROM ev WHERE ev.ord = i.ord)
), taken AS (
  UPDATE webhook_endpoint_leases l
  SET busy_until = now() + make_interval(secs => i.ttl), holder = i.token, taken_at = now()
  FROM free JOIN i ON i.ord = free.ord
  WHERE l.endpoint_id = free.endpoint_id AND l.slot = free.slot
  RETURNING free.ord, l.slot
)
SELECT ep.ord, ` + strings.ReplaceAll(deliverEndpointColumns, "e.", "ep.") + `,
       (SELECT slot FROM taken WHERE taken.ord = ep.ord),
       ev.id, ev.owner_id, ev.type, ev.subject, ev.occurred_at, ev.data
FROM ep LEFT JOIN ev ON ev.ord = ep.ord`

// takeReq is one run's take.
type takeReq struct {
	endpointID, eventID, token uuid.UUID
	ttl                        time.Duration
}

// TakeLease implements delivery.DeliverStore; takes that arrive together
// share one statement.
func (s *Store) TakeLease(ctx context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (delivery.Claim, error) {
	c, err := s.takes.Do(ctx, takeReq{endpointID: endpointID, eventID: eventID, token: token, ttl: ttl})
	if err != nil {
		return delivery.Claim{}, fmt.Errorf("take lease of endpoint %s: %w", endpointID, err)
	}
	if c == nil {
		return delivery.Claim{}, fmt.Errorf("endpoint %s: %w", endpointID, delivery.ErrGone)
	}
	return *c, nil
}

// takeRuns runs takeMany for reqs; nil for an endpoint that is gone.
func (s *Store) takeRuns(ctx context.Context, reqs []takeReq) ([]*delivery.Claim, error) {
	n := len(reqs)
	endpoints, events, tokens := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
	ttls := make([]float64, n)
	for i, r := range reqs {
		endpoints[i], events[i], tokens[i], ttls[i] = r.endpointID, r.eventID, r.token, r.ttl.Seconds()
	}
	out := make([]*delivery.Claim, n)
	// A deadlock with another writer of the same rows (PostgreSQL cancels
	// one of the two) is retried.
	err := pgerr.Retry(3, func() error {
		clear(out)
		rows, err := s.statements.Query(ctx, takeMany, endpoints, events, tokens, ttls)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				ord     int64
				c       delivery.Claim
				slot    *int16
				evID    *uuid.UUID
				ev      delivery.Event
				evOwner *uuid.UUID
				evType  *string
				evSubj  *string
				evAt    *time.Time
			)
			if err := scanDeliverEndpoint(rows, []any{&ord}, &c.Endpoint,
				&slot, &evID, &evOwner, &evType, &evSubj, &evAt, &ev.Data); err != nil {
				return err
			}
			r := reqs[ord-1]
			if evID != nil {
				ev.ID, ev.OwnerID, ev.Type, ev.Subject, ev.OccurredAt = *evID, *evOwner, *evType, *evSubj, *evAt
				c.Event = &ev
			}
			if slot != nil {
				c.Lease = &delivery.Lease{EndpointID: r.endpointID, Slot: int(*slot), Token: r.token}
			}
			out[ord-1] = &c
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// finishMany is the one statement that ends runs, one row of the unnest
// per run ($1..$21 and $23, in the order of finishRuns' arrays): it
// records the attempt (record) with the signature headers it sent,
// releases the lease slot by token (release) and settles the endpoint
// (settle: 1 success, 2 failure), returning per run whether it disabled the endpoint and how
// its health changed. Parts not asked for match no row. A success writes
// the endpoint only when it was failing; a failure when it is the first,
// the one that disables it, a later one while none has yet come
// CooldownAfter ($22) into the streak, or one a cooldown ($23) after the
// last written (failed_at, which decides the cooldown). The lease slots
// are all locked in key order before the first is changed (releasing is
// read whole by its uncorrelated count), so two statements never wait on
// each other in a circle.
const finishMany = `WITH i AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::int[], $5::text[], $6::int[], $7::bigint[],
    $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[], $13::bool[], $14::bool[], $15::int[],
    $16::uuid[], $17::int[], $18::float8[], $19::text[], $20::text[], $21::text[], $23::float8[])
    WITH ORDINALITY AS i(endpoint_id, job_id, event_id, attempt, outcome, status_code, latency_ms,
      response, error, location, at, now, record, release, slot,
      token, settle, disable_after, reason, ts, sig, cooldown, ord)
), attempt AS (
  INSERT INTO webhook_attempts (job_id, endpoint_id, event_id, attempt, outcome, status_code, latency_ms,
    response, error, location, attempted_at, webhook_timestamp, webhook_signature)
  SELECT i.job_id, i.endpoint_id, i.event_id, i.attempt, i.outcome, i.status_code, i.latency_ms,
    i.response, i.error, i.location, COALESCE(i.at, now()), i.ts, i.sig
  FROM i WHERE i.record AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = i.endpoint_id)
), releasing AS MATERIALIZED (
  SELECT l.endpoint_id, l.slot FROM i JOIN webhook_endpoint_leases l
    ON l.endpoint_id = i.endpoint_id AND l.slot = i.slot AND l.holder = i.token
  WHERE i.release
  ORDER BY l.endpoint_id, l.slot FOR NO KEY UPDATE OF l
), released AS (
  UPDATE webhook_endpoint_leases l SET busy_until = '-infinity', holder = NULL
  FROM releasing r WHERE l.endpoint_id = r.endpoint_id AND l.slot = r.slot AND (SELECT count(*) FROM releasing) >= 0
  RETURNING l.endpoint_id
), cleared AS (
  UPDATE webhook_endpoints e SET failing_since = NULL, failed_at = NULL, updated_at = i.now
  FROM i WHERE i.settle = 1 AND e.id = i.endpoint_id AND e.failing_since IS NOT NULL
  RETURNING i.ord
), failed AS (
  UPDATE webhook_endpoints e SET
    failing_since = COALESCE(e.failing_since, i.now),
    failed_at = i.now,
    enabled = e.failing_since IS NULL OR e.failing_since > i.now - make_interval(secs => i.disable_after),
    disabled_reason = CASE WHEN e.failing_since <= i.now - make_interval(secs => i.disable_after) THEN i.reason END,
    updated_at = i.now
  FROM i WHERE i.settle = 2 AND e.id = i.endpoint_id AND e.enabled
    AND (e.failing_since IS NULL OR e.failing_since <= i.now - make_interval(secs => i.disable_after))
  RETURNING i.ord, NOT e.enabled AS disabled
), again AS (
  UPDATE webhook_endpoints e SET failed_at = i.now
  FROM i WHERE i.settle = 2 AND e.id = i.endpoint_id AND e.enabled
    AND e.failing_since > i.now - make_interval(secs => i.disable_after)
    AND (COALESCE(e.failed_at, '-infinity') < LEAST(i.now, e.failing_since + make_interval(secs => $22::float8))
      OR (i.cooldown > 0 AND e.failed_at <= i.now - make_interval(secs => i.cooldown)))
)
SELECT i.ord, COALESCE(f.disabled, false),
  CASE WHEN cl.ord IS NOT NULL THEN 'recovered' WHEN f.disabled THEN 'disabled' WHEN f.ord IS NOT NULL THEN 'failing' ELSE '' END
FROM i
LEFT JOIN failed f ON f.ord = i.ord
LEFT JOIN cleared cl ON cl.ord = i.ord`

// statementConns is the size of the pool the take and the finishing
// statement run on. Each has one statement in flight per process (their
// batch groups), so two connections serve both. A connection plans a
// prepared statement on its first five runs before it settles on a
// generic plan, and these two take milliseconds to plan: on two
// connections a new process pays that twice, where on the shared pool it
// would pay it on every connection that happened to carry them.
const statementConns = 2

// Finish implements delivery.DeliverStore: the attempt, the release and
// the settlement in one statement, shared with the runs finishing at the
// same time.
func (s *Store) Finish(ctx context.Context, f delivery.Finish) (delivery.Settled, error) {
	if f.Attempt == nil && f.Lease == nil && f.Settle == delivery.SettleNone {
		return delivery.Settled{}, nil
	}
	if f.EndpointID == uuid.Nil {
		switch {
		case f.Lease != nil:
			f.EndpointID = f.Lease.EndpointID
		case f.Attempt != nil:
			f.EndpointID = f.Attempt.EndpointID
		}
	}
	settled, err := s.finishes.Do(ctx, f)
	if err != nil {
		return settled, fmt.Errorf("finish delivery to endpoint %s: %w", f.EndpointID, err)
	}
	return settled, nil
}

// finishRuns runs finishMany for fs. A deadlock with another writer of
// the same rows (PostgreSQL cancels one of the two) is retried: the
// cancelled statement changed nothing.
func (s *Store) finishRuns(ctx context.Context, fs []delivery.Finish) ([]delivery.Settled, error) {
	n := len(fs)
	var (
		endpoints, events, tokens  = make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
		jobs                       = make([]int64, n)
		attempts, slots, settles   = make([]int32, n), make([]int32, n), make([]int32, n)
		outcomes, reasons          = make([]string, n), make([]string, n)
		statuses                   = make([]*int32, n)
		latencies                  = make([]*int64, n)
		responses, errs, locations = make([]*string, n), make([]*string, n), make([]*string, n)
		stamps, sigs               = make([]*string, n), make([]*string, n)
		ats                        = make([]*time.Time, n)
		nows                       = make([]time.Time, n)
		records, releases          = make([]bool, n), make([]bool, n)
		disableAfter, cooldowns    = make([]float64, n), make([]float64, n)
	)
	for i, f := range fs {
		a := f.Attempt
		if a == nil {
			a = &delivery.Attempt{}
		}
		endpoints[i], events[i] = f.EndpointID, a.EventID
		jobs[i], attempts[i], outcomes[i] = a.JobID, int32(a.Attempt), string(a.Outcome)
		if a.StatusCode != 0 {
			c := int32(a.StatusCode)
			statuses[i] = &c
		}
		latencies[i] = latencyMS(a)
		responses[i], errs[i], locations[i] = nullString(a.Response), nullString(a.Error), nullString(a.Location)
		stamps[i], sigs[i] = nullString(a.Timestamp), nullString(a.Signature)
		ats[i] = timePtr(a.At)
		nows[i] = f.Now
		records[i] = f.Attempt != nil
		if f.Lease != nil {
			releases[i], slots[i], tokens[i] = true, int32(f.Lease.Slot), f.Lease.Token
		}
		settles[i], disableAfter[i], reasons[i] = int32(f.Settle), f.DisableAfter.Seconds(), f.DisableReason
		cooldowns[i] = f.Cooldown.Seconds()
	}
	out := make([]delivery.Settled, n)
	err := pgerr.Retry(3, func() error {
		return s.finishSettling(ctx, fs, func(q pgxQuerier) ([]healthChange, error) {
			rows, err := q.Query(ctx, finishMany, endpoints, jobs, events, attempts, outcomes, statuses, latencies,
				responses, errs, locations, ats, nows, records, releases, slots,
				tokens, settles, disableAfter, reasons, stamps, sigs, delivery.CooldownAfter.Seconds(), cooldowns)
			if err != nil {
				return nil, err
			}
			var (
				ord      int64
				disabled bool
				change   string
				changes  []healthChange
			)
			_, err = pgx.ForEachRow(rows, []any{&ord, &disabled, &change}, func() error {
				out[ord-1] = delivery.Settled{Disabled: disabled}
				if change != "" {
					changes = append(changes, healthChange{i: int(ord - 1), kind: change})
				}
				return nil
			})
			return changes, err
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AttemptOutcome implements delivery.DeliverStore: the outcome recorded
// last for the job's attempt, one probe of the job's index.
func (s *Store) AttemptOutcome(ctx context.Context, jobID int64, attempt int) (delivery.Outcome, bool, error) {
	var o string
	err := s.pool.QueryRow(ctx, `SELECT outcome FROM webhook_attempts WHERE job_id = $1 AND attempt = $2
ORDER BY id DESC LIMIT 1`, jobID, attempt).Scan(&o)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read attempt %d of delivery %d: %w", attempt, jobID, err)
	}
	return delivery.Outcome(o), true, nil
}

// ReleasePending makes every delivery in River's pending state available,
// through River's client (JobList, JobRetry), and returns how many. This
// engine never inserts a delivery pending and never makes a pending one
// available, so one queued pending by an earlier engine would wait for
// ever: the server releases them as it starts. Processes that start together may release
// the same job; River's retry of an available job leaves it available.
func (s *Store) ReleasePending(ctx context.Context) (int, error) {
	// A page of the listing: a bound on one statement, not a tuning.
	const releaseBatch = 1000
	n := 0
	for {
		page, err := s.river.JobList(ctx, river.NewJobListParams().
			States(rivertype.JobStatePending).Kinds(riverjob.WebhookDeliverArgs{}.Kind()).First(releaseBatch))
		if err != nil {
			return n, fmt.Errorf("list pending deliveries: %w", err)
		}
		for _, j := range page.Jobs {
			if _, err := s.river.JobRetry(ctx, j.ID); err != nil {
				return n, fmt.Errorf("make pending delivery %d available: %w", j.ID, err)
			}
		}
		n += len(page.Jobs)
		if len(page.Jobs) < releaseBatch {
			return n, nil
		}
	}
}

// Wake implements delivery.DeliverStore: one transaction locks the jobs
// still snoozed (sleepingJobs), makes each available with River's
// JobRetryTx, and reads those still running (runningJobs).
func (s *Store) Wake(ctx context.Context, jobs []int64) (int, []int64, error) {
	var (
		n       int
		running []int64
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sleepingJobs, jobs)
		if err != nil {
			return fmt.Errorf("lock snoozed deliveries: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("lock snoozed deliveries: %w", err)
		}
		for _, id := range ids {
			if _, err := s.river.JobRetryTx(ctx, tx, id); err != nil {
				return fmt.Errorf("make delivery %d available: %w", id, err)
			}
		}
		n = len(ids)
		rows, err = tx.Query(ctx, runningJobs, jobs)
		if err != nil {
			return fmt.Errorf("read running deliveries: %w", err)
		}
		running, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("read running deliveries: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return n, running, nil
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func latencyMS(a *delivery.Attempt) *int64 {
	if a.Latency <= 0 && a.StatusCode == 0 {
		return nil
	}
	ms := a.Latency.Milliseconds()
	return &ms
}

// PruneAttempts deletes delivery-log rows recorded before before, in
// batches, and returns how many.
func (s *Store) PruneAttempts(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_attempts WHERE id IN (
  SELECT id FROM webhook_attempts WHERE attempted_at < $1 LIMIT 1000)`, before)
		if err != nil {
			return total, fmt.Errorf("prune delivery log: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < 1000 {
			return total, nil
		}
	}
}

// reserveRate is the generic cell rate algorithm on the endpoint's rate_tat
// (the theoretical arrival time), in one statement: the row lock orders the
// starts of every replica, and a start whose wait would exceed the bound
// ($4) changes nothing. $2 is the emission interval, $3 the burst's
// tolerance ((burst - 1) intervals), in seconds.
const reserveRate = `WITH cur AS (
  SELECT id, greatest(coalesce(rate_tat, now()), now()) AS tat
  FROM webhook_endpoints WHERE id = $1 FOR UPDATE
), upd AS (
  UPDATE webhook_endpoints w SET rate_tat = cur.tat + make_interval(secs => $2)
  FROM cur WHERE w.id = cur.id AND extract(epoch FROM cur.tat - now()) - $3 <= $4
  RETURNING w.id
)
SELECT greatest(extract(epoch FROM cur.tat - now()) - $3, 0)::float8, EXISTS (SELECT 1 FROM upd) FROM cur`

// ReserveRate implements delivery.DeliverStore.
func (s *Store) ReserveRate(ctx context.Context, endpointID uuid.UUID, perSecond, burst int, maxWait time.Duration) (time.Duration, bool, error) {
	interval := 1 / float64(perSecond)
	var (
		wait     float64
		reserved bool
	)
	err := s.pool.QueryRow(ctx, reserveRate, endpointID, interval, float64(burst-1)*interval, maxWait.Seconds()).Scan(&wait, &reserved)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, fmt.Errorf("endpoint %s: %w", endpointID, delivery.ErrGone)
	}
	if err != nil {
		return 0, false, fmt.Errorf("reserve a start under the rate limit of endpoint %s: %w", endpointID, err)
	}
	return time.Duration(wait * float64(time.Second)), reserved, nil
}
