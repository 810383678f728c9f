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
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/standmeet/standmeet/internal/adapters/postgres/batch"
	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
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
	// promoting bounds the promotions in flight (maxPromotions).
	promoting chan struct{}
	// promoted, when set (by tests), is called before a promotion makes
	// its i-th delivery available; an error fails the promotion there.
	promoted func(i int) error
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
	s := &Store{pool: pool, statements: statements, river: river, promoting: make(chan struct{}, maxPromotions)}
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
	keys := make([][16]byte, len(ids))
	for i, id := range ids {
		keys[i] = id
	}
	rows, err := s.pool.Query(ctx, `SELECT id, owner_id, type, subject, occurred_at, data FROM events WHERE id = ANY($1)`, keys)
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

// chainTags mark a delivery inserted into its endpoint's chain; the
// worker reads them to count the first run out of the chain. A chain
// delivery inserted pending also says why it waits (pendingTags).
var (
	chainTags   = []string{riverjob.ChainTag}
	pendingTags = []string{riverjob.ChainTag, riverjob.ChainFullTag}
)

// WaitMetadataKey, in a delivery job's River metadata, says why a
// delivery inserted scheduled waits: {"reason": "cooling_down", "until":
// <RFC 3339>} for a failing endpoint's cooldown. It describes the wait at
// insertion: it holds while the job is still scheduled. (A delivery
// pending behind its endpoint's chain says so with a tag instead,
// riverjob.ChainFullTag.)
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

// joinChains counts one delivery more into each endpoint's chain ($1, in
// endpoint order so two fan-outs never deadlock): running when the chain
// has room ($2), pending otherwise, creating rows on first use. It runs on
// its own, before the fan-out's transaction, so an endpoint's queue row is
// locked for this one statement, never across the insert of the jobs; it
// returns whether each endpoint's delivery goes in available, and the
// chain's lane (laneOfChain).
const joinChains = `INSERT INTO webhook_endpoint_queues AS q (endpoint_id, running)
SELECT e, 1 FROM unnest($1::uuid[]) AS e ORDER BY e
ON CONFLICT (endpoint_id) DO UPDATE SET
  running = q.running + CASE WHEN q.running < $2 THEN 1 ELSE 0 END,
  pending = q.pending + CASE WHEN q.running < $2 THEN 0 ELSE 1 END,
  last_joined = q.running < $2
RETURNING q.endpoint_id, q.last_joined, ` + laneOfChain

// laneOfChain is the lane of the chain q (a webhook_endpoint_queues row):
// of the alive lanes, the one ranking first for its endpoint (rendezvous
// hashing, so a lane that comes or goes moves only the endpoints it ranks
// first for), or NULL when no lane is alive.
const laneOfChain = `(SELECT l.lane FROM webhook_lanes l WHERE l.alive_until > now()
  ORDER BY hashtext(q.endpoint_id::text || l.lane) DESC, l.lane LIMIT 1)`

// leaveChains takes back what joinChains counted for deliveries that were
// not inserted ($2 running, $3 pending per endpoint of $1).
const leaveChains = `UPDATE webhook_endpoint_queues q
SET running = GREATEST(q.running - c.r, 0), pending = GREATEST(q.pending - c.p, 0)
FROM unnest($1::uuid[], $2::int[], $3::int[]) AS c(e, r, p) WHERE q.endpoint_id = c.e`

// Enqueue inserts the deliveries in one transaction; River skips those
// whose (endpoint, event) job exists already. A chain delivery goes in
// available when its endpoint's chain has room and pending otherwise,
// counted (joinChains) in a statement of its own just before, so the
// window is exact and the chain's queue row is never locked across the
// insert. Counts of deliveries not inserted (duplicates, a failed
// transaction) are taken back. A delivery inserted pending while the
// chain ran short (a finishing run promoted before it was committed) is
// promoted by the fan-out itself after its commit, so nothing is left
// pending behind a chain that ended.
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
	var chained []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, d := range ds {
		if d.Chain && d.ScheduledAt.IsZero() && !seen[d.EndpointID] {
			seen[d.EndpointID] = true
			chained = append(chained, d.EndpointID)
		}
	}
	room := map[uuid.UUID]bool{}
	lanes := map[uuid.UUID]string{}
	if len(chained) > 0 {
		rows, err := s.pool.Query(ctx, joinChains, chained, delivery.ChainWindow)
		if err != nil {
			return nil, fmt.Errorf("queue %d deliveries: count them into their chains: %w", len(ds), err)
		}
		var (
			id     uuid.UUID
			joined bool
			lane   *string
		)
		if _, err := pgx.ForEachRow(rows, []any{&id, &joined, &lane}, func() error {
			room[id] = joined
			if lane != nil {
				lanes[id] = *lane
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("queue %d deliveries: count them into their chains: %w", len(ds), err)
		}
	}
	// counted says, per endpoint, what joinChains counted and the insert
	// has not confirmed yet.
	counted := map[uuid.UUID]bool{}
	for _, id := range chained {
		counted[id] = true
	}
	var (
		out     []delivery.Enqueued
		pending []uuid.UUID
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		params := make([]river.InsertManyParams, len(ds))
		joining := map[uuid.UUID]bool{}
		for id := range counted {
			joining[id] = true
		}
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
			case joining[d.EndpointID]:
				tags := chainTags
				if !room[d.EndpointID] {
					tags = pendingTags
				}
				// An empty lane leaves the delivery on the shared queue.
				p.InsertOpts = &river.InsertOpts{Tags: tags, Pending: !room[d.EndpointID], Queue: lanes[d.EndpointID]}
				// One delivery per endpoint joins the chain at a time.
				delete(joining, d.EndpointID)
			}
			params[i] = p
		}
		res, err := s.river.InsertManyTx(ctx, tx, params)
		if err != nil {
			return err
		}
		out = make([]delivery.Enqueued, len(res))
		pending = pending[:0]
		var skipped []uuid.UUID
		for i, r := range res {
			out[i] = delivery.Enqueued{JobID: r.Job.ID, Duplicate: r.UniqueSkippedAsDuplicate}
			// Chain deliveries are the ones carrying the chain's tags.
			o := params[i].InsertOpts
			if o == nil || o.Tags == nil || !o.ScheduledAt.IsZero() {
				continue
			}
			if r.UniqueSkippedAsDuplicate {
				skipped = append(skipped, ds[i].EndpointID)
			} else if o.Pending {
				pending = append(pending, ds[i].EndpointID)
			}
		}
		if len(skipped) > 0 {
			// A fan-out run twice: what it counted was not inserted.
			if err := s.leaveChains(ctx, tx, skipped, room); err != nil {
				return err
			}
		}
		if summary != nil {
			if _, err := tx.Exec(ctx, recordSummary, sum.EventID, summary); err != nil {
				return fmt.Errorf("record fan-out summary: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		if len(chained) > 0 {
			// Nothing was inserted: take the counts back, even when ctx
			// ended. Should this fail too, the sweep recounts a chain that
			// stalls on them.
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), delivery.FinishTimeout)
			if lerr := s.leaveChains(lctx, s.pool, chained, room); lerr != nil {
				err = errors.Join(err, lerr)
			}
			cancel()
		}
		return nil, fmt.Errorf("queue %d deliveries: %w", len(ds), err)
	}
	if len(pending) > 0 {
		if err := s.promoteShort(ctx, pending); err != nil {
			// The periodic sweep restarts a chain this leaves stalled.
			return out, fmt.Errorf("queue %d deliveries: %w", len(ds), err)
		}
	}
	return out, nil
}

// leaveChains takes back the counts of the endpoints' deliveries that
// were not inserted; room says which were counted running.
func (s *Store) leaveChains(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, ids []uuid.UUID, room map[uuid.UUID]bool) error {
	running, pending := make([]int32, len(ids)), make([]int32, len(ids))
	for i, id := range ids {
		if room[id] {
			running[i] = 1
		} else {
			pending[i] = 1
		}
	}
	if _, err := db.Exec(ctx, leaveChains, ids, running, pending); err != nil {
		return fmt.Errorf("take back chain counts: %w", err)
	}
	return nil
}

// promoteShort promotes the chains of the endpoints, whose deliveries went
// pending, that have run short of ChainRefill meanwhile: their finishing
// runs may have promoted before those deliveries were committed.
func (s *Store) promoteShort(ctx context.Context, ids []uuid.UUID) error {
	rows, err := s.pool.Query(ctx, `SELECT endpoint_id FROM webhook_endpoint_queues WHERE endpoint_id = ANY($1) AND running < $2`,
		ids, delivery.ChainRefill)
	if err != nil {
		return fmt.Errorf("read short chains: %w", err)
	}
	short, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("read short chains: %w", err)
	}
	for _, id := range short {
		if _, err := s.Promote(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// deliverEndpointColumns are the columns of webhook_endpoints (alias e) that
// scanDeliverEndpoint reads, in its order.
const deliverEndpointColumns = `e.id, e.owner_id, e.url, e.event_types, e.embed_id, e.headers, e.max_in_flight, e.enabled,
  e.failing_since, e.failed_at, e.secret_enc, e.prev_secret_enc, e.prev_secret_until, e.timeout_seconds, e.max_attempts,
  coalesce(e.rate_limit_per_second, 0) AS rate_limit_per_second, coalesce(e.rate_limit_burst, 0) AS rate_limit_burst`

// scanDeliverEndpoint scans deliverEndpointColumns into ep, then the
// row's remaining columns into extra.
func scanDeliverEndpoint(row pgx.Row, ep *delivery.Endpoint, extra ...any) error {
	return scanDeliverEndpointAfter(row, nil, ep, extra...)
}

// scanDeliverEndpointAfter is scanDeliverEndpoint for a row whose first
// columns go to before.
func scanDeliverEndpointAfter(row pgx.Row, before []any, ep *delivery.Endpoint, extra ...any) error {
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
	endpoints, events, tokens := make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
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
			if err := scanDeliverEndpointAfter(rows, []any{&ord}, &c.Endpoint,
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

// renewLease extends a held slot and reads the endpoint in one statement.
const renewLease = `WITH ep AS (
  SELECT ` + deliverEndpointColumns + `
  FROM webhook_endpoints e WHERE e.id = $1
), renewed AS (
  UPDATE webhook_endpoint_leases l SET busy_until = now() + make_interval(secs => $4::float8)
  FROM ep
  WHERE l.endpoint_id = $1 AND l.slot = $2 AND l.holder = $3 AND ep.enabled AND l.slot < ep.max_in_flight
  RETURNING 1
)
SELECT ep.*, EXISTS (SELECT 1 FROM renewed) FROM ep`

// RenewLease implements delivery.DeliverStore.
func (s *Store) RenewLease(ctx context.Context, l delivery.Lease, ttl time.Duration) (delivery.Endpoint, bool, error) {
	var (
		ep   delivery.Endpoint
		held bool
	)
	row := s.pool.QueryRow(ctx, renewLease, l.EndpointID, l.Slot, l.Token, ttl.Seconds())
	err := scanDeliverEndpoint(row, &ep, &held)
	if errors.Is(err, pgx.ErrNoRows) {
		return ep, false, fmt.Errorf("endpoint %s: %w", l.EndpointID, delivery.ErrGone)
	}
	if err != nil {
		return ep, false, fmt.Errorf("renew lease of endpoint %s: %w", l.EndpointID, err)
	}
	return ep, held, nil
}

// finishMany is the one statement that ends runs, one row of the unnest
// per run ($1..$22, in the order of finishRuns' arrays): it records the
// attempt (record) with the signature headers it sent, releases the lease
// slot by token (release), settles the endpoint (settle: 1
// success, 2 failure) and counts the run out of its endpoint's chain
// (chain), returning per run the chain's counts as they are after it.
// Parts not asked for match no row. A success writes the endpoint only
// when it was failing; a failure when it is the first, the one that
// disables it, or a later one while none has yet come CooldownAfter ($23)
// into the streak (failed_at, which decides the fan-out's cooldown). Runs
// of one endpoint that share the statement are counted out in their
// order: run k of n sees the count before the statement less k, as one
// statement each would have. The lease slots and the chains'
// rows are all locked in key order before the first is changed (releasing
// and locked are read whole by their uncorrelated counts), as the fan-out's
// count locks chains, so none of them waits on another in a circle.
const finishMany = `WITH i AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::int[], $5::text[], $6::int[], $7::bigint[],
    $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[], $13::bool[], $14::bool[], $15::int[],
    $16::uuid[], $17::int[], $18::float8[], $19::text[], $20::bool[], $21::text[], $22::text[])
    WITH ORDINALITY AS i(endpoint_id, job_id, event_id, attempt, outcome, status_code, latency_ms,
      response, error, location, at, now, record, release, slot,
      token, settle, disable_after, reason, chain, ts, sig, ord)
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
    AND COALESCE(e.failed_at, '-infinity') < LEAST(i.now, e.failing_since + make_interval(secs => $23::float8))
), counts AS (
  SELECT i.endpoint_id, count(*)::int AS n FROM i WHERE i.chain GROUP BY i.endpoint_id
), locked AS MATERIALIZED (
  SELECT q.endpoint_id FROM webhook_endpoint_queues q
  WHERE q.endpoint_id IN (SELECT endpoint_id FROM counts)
  ORDER BY q.endpoint_id FOR NO KEY UPDATE
), chain AS (
  UPDATE webhook_endpoint_queues q SET running = GREATEST(q.running - c.n, 0)
  FROM counts c WHERE q.endpoint_id = c.endpoint_id AND (SELECT count(*) FROM locked) >= 0
  RETURNING q.endpoint_id, q.running, q.pending, c.n
), ranked AS (
  SELECT i.ord, i.endpoint_id, i.chain,
    row_number() OVER (PARTITION BY i.endpoint_id, i.chain ORDER BY i.ord)::int AS k
  FROM i
)
SELECT r.ord, COALESCE(f.disabled, false),
  CASE WHEN r.chain THEN COALESCE(GREATEST(ch.running + ch.n - r.k, 0), 0) ELSE 0 END,
  CASE WHEN r.chain THEN COALESCE(ch.pending, 0) ELSE 0 END,
  CASE WHEN cl.ord IS NOT NULL THEN 'recovered' WHEN f.disabled THEN 'disabled' WHEN f.ord IS NOT NULL THEN 'failing' ELSE '' END
FROM ranked r
LEFT JOIN failed f ON f.ord = r.ord
LEFT JOIN cleared cl ON cl.ord = r.ord
LEFT JOIN chain ch ON ch.endpoint_id = r.endpoint_id AND r.chain`

// maxPromotions bounds the promotions in flight. Each holds a pooled
// connection for one River call per delivery it makes available, and the
// chains of a fan-out to many endpoints cross their refill mark together:
// unbounded, their promotions would take most of the pool and every
// delivery's take and finishing statement would queue behind them. A
// refill is due long before the rest of its window is delivered, so
// waiting a turn costs it nothing.
const maxPromotions = 4

// statementConns is the size of the pool the take and the finishing
// statement run on. Each has one statement in flight per process (their
// batch groups), so two connections serve both. A connection plans a
// prepared statement on its first five runs before it settles on a
// generic plan, and these two take milliseconds to plan: on two
// connections a new process pays that twice, where on the shared pool it
// would pay it on every connection that happened to carry them.
const statementConns = 2

// Finish implements delivery.DeliverStore: the attempt, the release,
// the settlement and the chain's count in one statement, shared with the
// runs finishing at the same time.
func (s *Store) Finish(ctx context.Context, f delivery.Finish) (delivery.Settled, error) {
	if f.Attempt == nil && f.Lease == nil && f.Settle == delivery.SettleNone && !f.Chain {
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
		endpoints, events, tokens  = make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		jobs                       = make([]int64, n)
		attempts, slots, settles   = make([]int32, n), make([]int32, n), make([]int32, n)
		outcomes, reasons          = make([]string, n), make([]string, n)
		statuses                   = make([]*int32, n)
		latencies                  = make([]*int64, n)
		responses, errs, locations = make([]*string, n), make([]*string, n), make([]*string, n)
		stamps, sigs               = make([]*string, n), make([]*string, n)
		ats                        = make([]*time.Time, n)
		nows                       = make([]time.Time, n)
		records, releases, chains  = make([]bool, n), make([]bool, n), make([]bool, n)
		disableAfter               = make([]float64, n)
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
		chains[i] = f.Chain
	}
	out := make([]delivery.Settled, n)
	err := pgerr.Retry(3, func() error {
		return s.finishSettling(ctx, fs, func(q pgxQuerier) ([]healthChange, error) {
			rows, err := q.Query(ctx, finishMany, endpoints, jobs, events, attempts, outcomes, statuses, latencies,
				responses, errs, locations, ats, nows, records, releases, slots,
				tokens, settles, disableAfter, reasons, chains, stamps, sigs, delivery.CooldownAfter.Seconds())
			if err != nil {
				return nil, err
			}
			var (
				ord              int64
				disabled         bool
				running, pending int32
				change           string
				changes          []healthChange
			)
			_, err = pgx.ForEachRow(rows, []any{&ord, &disabled, &running, &pending, &change}, func() error {
				out[ord-1] = delivery.Settled{Disabled: disabled, Running: int(running), Pending: pending > 0}
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

// Promote implements delivery.DeliverStore: holding the endpoint's chain
// lock, it takes the oldest pending deliveries, up to the room left in the
// window, out of the chain's pending count, and makes them available with
// River's JobRetryTx a chunk per transaction, so River fetches the first
// while the rest are being made available.
func (s *Store) Promote(ctx context.Context, endpointID uuid.UUID) (int, error) {
	n, err := s.promote(ctx, endpointID, false)
	if err != nil {
		return n, fmt.Errorf("promote deliveries of endpoint %s: %w", endpointID, err)
	}
	return n, nil
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

// lockChain takes the endpoint's chain lock for the transaction: it
// serializes what moves the chain's pending deliveries (a promotion, retry
// now of a pending delivery), so none is made available twice, while the
// fan-out and the finishing runs, which only count, go on beside it.
const lockChain = `SELECT pg_advisory_xact_lock(1330013, hashtext($1::text))`

// holdChain and releaseChain take and give back the same lock for a
// session: a promotion holds it across the transactions that make its
// deliveries available.
//
// holdChain also turns off sorting in its transaction for takeChain's
// read of the oldest pending deliveries, and takeChain turns it on again
// as it runs, before River's calls that follow it: no statement is added.
// River's statistics of its table are as old as its last autovacuum: taken
// before a backlog went pending, they count no pending job, and the
// planner then reads an endpoint's pending deliveries through River's
// fetching index (every pending job, of every endpoint, then sorted by id)
// rather than through standmeet_webhook_pending_idx (that endpoint's,
// already in id order). Without a sort, only the second answers in order.
const (
	holdChain    = `SELECT pg_advisory_lock(1330013, hashtext($1::text)), set_config('enable_sort', 'off', true)`
	releaseChain = `SELECT pg_advisory_unlock(1330013, hashtext($1::text))`
)

// giveBack returns to the chain's pending count the deliveries a promotion
// took but did not make available.
const giveBack = `UPDATE webhook_endpoint_queues
SET running = GREATEST(running - $2, 0), pending = pending + $2 WHERE endpoint_id = $1`

// promoteChunk is how many deliveries a promotion makes available per
// transaction: each chunk can be fetched once it commits, not when the
// whole promotion does.
const promoteChunk = 8

// cleanup returns a context for the statements a promotion runs after ctx
// may be done (giving back what it took, releasing the chain lock),
// bounded by delivery.FinishTimeout.
func cleanup(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), delivery.FinishTimeout)
}

// promote is Promote; with restart it first recounts the chain from
// River's jobs (a process died holding part of it). An endpoint that is
// failing gets one delivery at a time, as new deliveries to it wait out a
// cooldown. Every promotion, the sweep's too, waits for its turn
// (maxPromotions) before it takes a connection.
//
// The first transaction takes the chain lock (held by the session until
// the end), takes the deliveries and makes the first promoteChunk of them
// available; each further chunk has a transaction of its own. A chunk that
// fails gives back to the pending count what was not made available. A
// process that dies between two chunks leaves deliveries in River's
// pending state, counted running: the chain runs short until it empties,
// and then the sweep, which looks for River's pending jobs, restarts it. It
// costs time, never a delivery.
func (s *Store) promote(ctx context.Context, endpointID uuid.UUID, restart bool) (n int, err error) {
	select {
	case s.promoting <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-s.promoting }()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("acquire a connection: %w", err)
	}
	defer conn.Release()
	// The release runs even when taking the lock failed: a lock taken just
	// as its statement was cancelled stays with the session otherwise.
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		if _, uerr := conn.Exec(cctx, releaseChain, endpointID); uerr != nil {
			// A session that may still hold the lock goes back to no pool:
			// closing it releases the lock.
			if cerr := conn.Conn().Close(cctx); cerr != nil {
				uerr = errors.Join(uerr, cerr)
			}
			err = errors.Join(err, fmt.Errorf("release the chain lock: %w", uerr))
		}
	}()
	// Once the lock is held, the promotion goes on even if the caller gives
	// up: cut off between its chunks, it would leave deliveries counted
	// running until the sweep found them. It is bounded as a delivery run
	// is (JobTimeout).
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), delivery.JobTimeout)
	defer cancel()
	var ids []int64
	err = inTx(mctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, holdChain, endpointID); err != nil {
			return fmt.Errorf("lock the chain: %w", err)
		}
		err := tx.QueryRow(mctx, takeChain, endpointID, delivery.ChainWindow, restart).Scan(&ids)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("take pending deliveries: %w", err)
		}
		return s.makeAvailable(mctx, tx, ids, 0)
	})
	if err != nil {
		return 0, err
	}
	for start := promoteChunk; start < len(ids); start += promoteChunk {
		err = inTx(mctx, conn, func(tx pgx.Tx) error { return s.makeAvailable(mctx, tx, ids, start) })
		if err != nil {
			cctx, cancel := cleanup(ctx)
			defer cancel()
			if _, gerr := conn.Exec(cctx, giveBack, endpointID, len(ids)-start); gerr != nil {
				err = errors.Join(err, fmt.Errorf("give back %d pending deliveries: %w", len(ids)-start, gerr))
			}
			return start, err
		}
	}
	return len(ids), nil
}

// Wake implements delivery.DeliverStore: one transaction locks the jobs
// still snoozed (sleepingJobs) and makes each available with River's
// JobRetryTx.
func (s *Store) Wake(ctx context.Context, jobs []int64) (int, error) {
	n := 0
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
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// inTx runs fn in a transaction on conn (uow.UnitOfWork.Do, whose
// rollback outlives ctx, so conn stays usable to give back and unlock).
func inTx(ctx context.Context, conn *pgxpool.Conn, fn func(pgx.Tx) error) error {
	return uow.New(conn, nil, func(tx pgx.Tx, _ domain.Recorder) pgx.Tx { return tx }).Do(ctx, fn)
}

// makeAvailable makes the chunk of ids from start available with River's
// JobRetryTx in tx.
func (s *Store) makeAvailable(ctx context.Context, tx pgx.Tx, ids []int64, start int) error {
	for i, id := range ids[start:min(start+promoteChunk, len(ids))] {
		if s.promoted != nil {
			if err := s.promoted(start + i); err != nil {
				return err
			}
		}
		if _, err := s.river.JobRetryTx(ctx, tx, id); err != nil {
			return fmt.Errorf("make delivery %d available: %w", id, err)
		}
	}
	return nil
}

// ChainTotals returns, over all endpoints, the chains' deliveries River may
// run and those waiting pending (an upper bound), in one statement.
func (s *Store) ChainTotals(ctx context.Context) (running, pending int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT COALESCE(sum(running), 0)::bigint, COALESCE(sum(pending), 0)::bigint
FROM webhook_endpoint_queues`).Scan(&running, &pending)
	if err != nil {
		return 0, 0, fmt.Errorf("count delivery chains: %w", err)
	}
	return running, pending, nil
}

// sweepPlanner turns sorting and whole-table scans off for the rest of the
// sweep's implicit transaction (see stalledChains): River's statistics can
// make either look cheap when it reads every job there has been. The scan
// of the queue rows, which has no other way, then costs like a disabled
// one, so JIT compilation, which such costs set off and a listing this
// small never repays, is off too.
const sweepPlanner = `SELECT set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true),
  set_config('jit', 'off', true)`

// SweepChains restarts every stalled chain (see stalledChains): the safety
// net for a chain whose deliveries were lost with a process. It returns how
// many deliveries it made available. A sweep that finds another listing
// the stalled chains returns at once, having restarted nothing: the other
// finds the same chains. The listing is one round trip: sweepPlanner and
// sweepTurn in one batch, one implicit transaction.
func (s *Store) SweepChains(ctx context.Context) (int, error) {
	var (
		turn bool
		ids  []uuid.UUID
	)
	b := &pgx.Batch{}
	b.Queue(sweepPlanner)
	b.Queue(sweepTurn).QueryRow(func(row pgx.Row) error { return row.Scan(&turn, &ids) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return 0, fmt.Errorf("find stalled delivery chains: %w", err)
	}
	if !turn {
		return 0, nil
	}
	total := 0
	for _, id := range ids {
		n, err := s.promote(ctx, id, true)
		if err != nil {
			return total, fmt.Errorf("restart delivery chain of endpoint %s: %w", id, err)
		}
		total += n
	}
	return total, nil
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
