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
	// statements is the take's and the finishing statement's own pool.
	statements *pgxpool.Pool
	river      *riverjob.Inserter
	// Calls that arrive together share one statement (batch.Group).
	finishes *batch.Group[delivery.Finish, delivery.Settled]
	events   *batch.Group[uuid.UUID, *delivery.Event]
	takes    *batch.Group[takeReq, *delivery.Claim]
	// healthRec records the events of the finishing statements' health
	// changes (RecordHealthWith); nil records none.
	healthRec uow.Recorder
}

var (
	_ delivery.FanoutStore  = (*Store)(nil)
	_ delivery.DeliverStore = (*Store)(nil)
)

// NewStore returns a Store whose deliveries river (an insert-only client)
// inserts. It opens a pool of statementConns connections to pool's database
// for the take and the finishing statement; Close closes it.
func NewStore(pool *pgxpool.Pool, river *riverjob.Inserter) (*Store, error) {
	cfg := pool.Config()
	cfg.MaxConns, cfg.MinConns = statementConns, 0
	statements, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open the delivery statements' pool: %w", err)
	}
	s := &Store{pool: pool, statements: statements, river: river}
	s.events = &batch.Group[uuid.UUID, *delivery.Event]{Run: s.readEvents, MaxFlights: 2}
	// Two takes of one endpoint in one statement would see the same free slot.
	s.takes = &batch.Group[takeReq, *delivery.Claim]{
		Run:        s.takeRuns,
		Key:        func(r takeReq) (any, bool) { return r.endpointID, true },
		MaxFlights: 1,
	}
	// One finishing statement in flight never waits on another's rows; two
	// updates of one endpoint row cannot share a statement.
	s.finishes = &batch.Group[delivery.Finish, delivery.Settled]{
		Run:        s.finishRuns,
		Key:        func(f delivery.Finish) (any, bool) { return f.EndpointID, f.Settle != delivery.SettleNone },
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
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[delivery.Event])
	if err != nil {
		return nil, err
	}
	found := make(map[uuid.UUID]*delivery.Event, len(ids))
	for i := range evs {
		found[evs[i].ID] = &evs[i]
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
		return nil, fmt.Errorf("list the endpoints of owner %s: %w", ownerID, err)
	}
	out, err := pgx.AppendRows([]delivery.Endpoint(nil), rows, func(row pgx.CollectableRow) (e delivery.Endpoint, err error) {
		var mif int16
		err = row.Scan(&e.ID, &e.OwnerID, &e.URL, &e.EventTypes, &e.EmbedID, &mif, &e.Enabled, &e.FailingSince, &e.FailedAt, &e.Filter)
		e.MaxInFlight = int(mif)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the endpoints of owner %s: %w", ownerID, err)
	}
	return out, nil
}

// WaitMetadataKey, in a delivery job's River metadata, says why a
// delivery inserted scheduled waits: {"reason": "cooling_down", "until":
// <RFC 3339>} for a failing endpoint's cooldown. It describes the wait at
// insertion: it holds while the job is still scheduled.
const WaitMetadataKey = "standmeet_wait"

// recordSummary writes an event's fan-out summary, replacing that of an
// earlier run of the fan-out.
const recordSummary = `INSERT INTO webhook_fanouts (event_id, reasons) VALUES ($1, $2)
ON CONFLICT (event_id) DO UPDATE SET reasons = EXCLUDED.reasons, recorded_at = now()`

// lanesOf picks the lane of each endpoint of $1, or NULL when no lane is
// alive: rendezvous hashing, so a lane that comes or goes moves only the
// endpoints it ranks first for.
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

// Enqueue inserts the deliveries and the summary in one transaction; River
// skips a delivery whose (endpoint, event) job exists. One due now goes on
// its endpoint's lane (lanesOf) or, with none alive, on the shared webhooks
// queue, which every process works; a cooled-down one on the shared queue.
func (s *Store) Enqueue(ctx context.Context, ds []delivery.Delivery, sum delivery.Summary) ([]delivery.Enqueued, error) {
	var summary []byte
	if !sum.Empty() {
		var err error
		if summary, err = json.Marshal(sum); err != nil {
			return nil, fmt.Errorf("encode fan-out summary of event %s: %w", sum.EventID, err)
		}
		if len(ds) == 0 {
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
					md, err := json.Marshal(map[string]map[string]any{WaitMetadataKey: {"reason": d.Wait, "until": d.ScheduledAt.UTC()}})
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

// deliverEndpointColumns are the columns of webhook_endpoints (alias e)
// that takeRuns scans, in its order.
const deliverEndpointColumns = `e.id, e.owner_id, e.url, e.event_types, e.embed_id, e.headers, e.max_in_flight, e.enabled,
  e.failing_since, e.failed_at, e.secret_enc, e.prev_secret_enc, e.prev_secret_until, e.timeout_seconds, e.max_attempts,
  coalesce(e.rate_limit_per_second, 0) AS rate_limit_per_second, coalesce(e.rate_limit_burst, 0) AS rate_limit_burst`

// takeMany is the take of many runs, one row of the unnest per run
// (endpoint $1, event $2, token $3, ttl in seconds $4): it reads the
// endpoint and the event and, when the endpoint is enabled and the event
// exists, takes the endpoint's first free slot below max_in_flight. SKIP
// LOCKED sends a concurrent taker to another slot, and PostgreSQL re-checks
// busy_until on the locked row, so two takers never hold one slot.
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

// takeRuns runs takeMany for reqs; nil for an endpoint that is gone. A
// deadlock with another writer of the same rows is retried: PostgreSQL
// cancels one of the two, which changed nothing.
func (s *Store) takeRuns(ctx context.Context, reqs []takeReq) ([]*delivery.Claim, error) {
	n := len(reqs)
	endpoints, events, tokens, ttls := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n), make([]float64, n)
	for i, r := range reqs {
		endpoints[i], events[i], tokens[i], ttls[i] = r.endpointID, r.eventID, r.token, r.ttl.Seconds()
	}
	out := make([]*delivery.Claim, n)
	err := pgerr.Retry(3, func() error {
		clear(out)
		rows, err := s.statements.Query(ctx, takeMany, endpoints, events, tokens, ttls)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				ord                    int64
				c                      delivery.Claim
				e                      = &c.Endpoint
				headers                []byte
				mif, timeout, attempts int16
				rate, burst            int32
				slot                   *int16
				ev                     delivery.Event
				evID, evOwner          *uuid.UUID
				evType, evSubj         *string
				evAt                   *time.Time
			)
			if err := rows.Scan(&ord, &e.ID, &e.OwnerID, &e.URL, &e.EventTypes, &e.EmbedID, &headers, &mif, &e.Enabled,
				&e.FailingSince, &e.FailedAt, &e.SecretSealed, &e.PrevSecretSealed, &e.PrevSecretUntil, &timeout, &attempts, &rate, &burst,
				&slot, &evID, &evOwner, &evType, &evSubj, &evAt, &ev.Data); err != nil {
				return err
			}
			e.MaxInFlight, e.TimeoutSeconds, e.MaxAttempts = int(mif), int(timeout), int(attempts)
			e.RatePerSecond, e.RateBurst = int(rate), int(burst)
			if err := json.Unmarshal(headers, &e.Headers); err != nil {
				return fmt.Errorf("decode headers of endpoint %s: %w", e.ID, err)
			}
			if evID != nil {
				ev.ID, ev.OwnerID, ev.Type, ev.Subject, ev.OccurredAt = *evID, *evOwner, *evType, *evSubj, *evAt
				c.Event = &ev
			}
			if slot != nil {
				c.Lease = &delivery.Lease{EndpointID: reqs[ord-1].endpointID, Slot: int(*slot), Token: reqs[ord-1].token}
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

// finishMany ends runs, one row of the unnest per run ($1..$21 and $23, in
// finishRuns' order): it records the attempt (record), releases the slot by
// token (release) and settles the endpoint (settle: 1 success, 2 failure),
// returning per run whether it disabled the endpoint and how its health
// changed. A failure writes the endpoint only when it is the first, disables
// it, comes while no failure written yet is CooldownAfter ($22) into the
// streak, or comes a cooldown ($23) after failed_at. All the slots are
// locked in key order before the first is changed (the uncorrelated count
// reads releasing whole), so two statements never wait on each other in a
// circle.
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

// statementConns is the size of the take's and the finishing statement's
// pool: each has one statement in flight per process (its batch.Group). A
// connection plans a prepared statement on its first five runs, and these
// take milliseconds to plan, so few connections pay that few times.
const statementConns = 2

// Finish implements delivery.DeliverStore: the attempt, the release and
// the settlement in one statement, shared with the runs finishing with it.
func (s *Store) Finish(ctx context.Context, f delivery.Finish) (delivery.Settled, error) {
	if f.Attempt == nil && f.Lease == nil && f.Settle == delivery.SettleNone {
		return delivery.Settled{}, nil
	}
	if f.EndpointID == uuid.Nil && f.Lease != nil {
		f.EndpointID = f.Lease.EndpointID
	} else if f.EndpointID == uuid.Nil && f.Attempt != nil {
		f.EndpointID = f.Attempt.EndpointID
	}
	settled, err := s.finishes.Do(ctx, f)
	if err != nil {
		return settled, fmt.Errorf("finish delivery to endpoint %s: %w", f.EndpointID, err)
	}
	return settled, nil
}

// finishRuns runs finishMany for fs, retrying a deadlock as takeRuns does.
func (s *Store) finishRuns(ctx context.Context, fs []delivery.Finish) ([]delivery.Settled, error) {
	n := len(fs)
	var (
		endpoints, events, tokens, jobs = make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n), make([]int64, n)
		attempts, slots, settles        = make([]int32, n), make([]int32, n), make([]int32, n)
		outcomes, reasons, statuses     = make([]string, n), make([]string, n), make([]*int32, n)
		responses, errs, locations      = make([]*string, n), make([]*string, n), make([]*string, n)
		stamps, sigs, latencies         = make([]*string, n), make([]*string, n), make([]*int64, n)
		ats, nows, records, releases    = make([]*time.Time, n), make([]time.Time, n), make([]bool, n), make([]bool, n)
		disableAfter, cooldowns         = make([]float64, n), make([]float64, n)
		none                            delivery.Attempt
	)
	for i, f := range fs {
		a := f.Attempt
		if a == nil {
			a = &none // its columns match no row of the insert
		}
		endpoints[i], events[i], jobs[i], attempts[i], outcomes[i] = f.EndpointID, a.EventID, a.JobID, int32(a.Attempt), string(a.Outcome)
		if a.StatusCode != 0 {
			c := int32(a.StatusCode)
			statuses[i] = &c
		}
		if a.Latency > 0 || a.StatusCode != 0 {
			ms := a.Latency.Milliseconds()
			latencies[i] = &ms
		}
		responses[i], errs[i], locations[i] = nullString(a.Response), nullString(a.Error), nullString(a.Location)
		stamps[i], sigs[i], ats[i], nows[i], records[i] = nullString(a.Timestamp), nullString(a.Signature), timePtr(a.At), f.Now, f.Attempt != nil
		if f.Lease != nil {
			releases[i], slots[i], tokens[i] = true, int32(f.Lease.Slot), f.Lease.Token
		}
		settles[i], disableAfter[i], reasons[i], cooldowns[i] = int32(f.Settle), f.DisableAfter.Seconds(), f.DisableReason, f.Cooldown.Seconds()
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

// ReleasePending makes every delivery in River's pending state available
// through River's client (JobList, JobRetry) and returns how many: nothing
// else makes one available, so the server calls it as it starts (see
// docs/design/delivery.md, Lanes). Processes that start together may
// release a job twice, which River's retry leaves available.
func (s *Store) ReleasePending(ctx context.Context) (int, error) {
	const releaseBatch = 1000 // a bound on one statement, not a tuning
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
		if running, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
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

// reserveRate is the generic cell rate algorithm on the endpoint's
// rate_tat (the theoretical arrival time): the row lock orders every
// replica's starts, and a start that would wait longer than $4 changes
// nothing. $2 is the emission interval, $3 the burst's tolerance
// ((burst - 1) intervals), in seconds.
const reserveRate = `WITH cur AS (
  SELECT id, greatest(coalesce(rate_tat, now()), now()) AS tat
  FROM webhook_endpoints WHERE id = $1 FOR UPDATE
), upd AS (
  UPDATE webhook_endpoints w SET rate_tat = cur.tat + make_interval(secs => $2)
  FROM cur WHERE w.id = cur.id AND extract(epoch FROM cur.tat - now()) - $3 <= $4
  RETURNING w.id
)
SELECT greatest(extract(epoch FROM cur.tat - now()) - $3, 0)::float8, EXISTS (SELECT 1 FROM upd) FROM cur`

// ReserveRate implements delivery.DeliverStore with reserveRate.
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
