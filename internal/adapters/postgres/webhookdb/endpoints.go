// Package webhookdb is the PostgreSQL adapter of outbound webhooks: the
// owner domain's endpoint store and delivery log (webhook.UnitOfWork), and
// the storage of the webhook.fanout and webhook.deliver handlers
// (delivery.FanoutStore, delivery.DeliverStore), including the
// in-flight lease and the NOTIFY that wakes waiting deliveries in other
// replicas.
package webhookdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// notFound is what every store returns for a row that does not exist for
// the calling owner.
func notFound() error {
	return domain.NotFound(webhook.CodeEndpointNotFound, "webhook endpoint not found")
}

const endpointColumns = `id, owner_id, url, description, event_types, embed_id, headers, max_in_flight,
enabled, disabled_reason, failing_since, secret_enc, prev_secret_enc, prev_secret_until, created_at, updated_at,
timeout_seconds, max_attempts, deleted_at, coalesce(nullif(signing, 'hmac-sha256'), ''), coalesce(public_key, ''), coalesce(prev_public_key, ''), filter,
coalesce(rate_limit_per_second, 0), coalesce(rate_limit_burst, 0),
coalesce(created_by, ''), coalesce(updated_by, '')`

func scanEndpoint(row pgx.Row) (webhook.Endpoint, error) {
	var (
		e       webhook.Endpoint
		headers []byte
		mif     int16
		timeout int16
		tries   int16
		rate    int32
		burst   int32
	)
	err := row.Scan(&e.ID, &e.OwnerID, &e.URL, &e.Description, &e.EventTypes, &e.EmbedID, &headers, &mif,
		&e.Enabled, &e.DisabledReason, &e.FailingSince, &e.SecretSealed, &e.PrevSecretSealed, &e.PrevSecretUntil,
		&e.CreatedAt, &e.UpdatedAt, &timeout, &tries, &e.DeletedAt, &e.Signing, &e.PublicKey, &e.PrevPublicKey, &e.Filter, &rate, &burst,
		&e.CreatedBy, &e.UpdatedBy)
	if err != nil {
		return e, err
	}
	e.MaxInFlight, e.TimeoutSeconds, e.MaxAttempts = int(mif), int(timeout), int(tries)
	e.RateLimitPerSecond, e.RateLimitBurst = int(rate), int(burst)
	if len(e.Filter) > 0 {
		// jsonb writes spaces after ':' and ','; the domain keeps filters
		// compact.
		var b bytes.Buffer
		if err := json.Compact(&b, e.Filter); err != nil {
			return e, fmt.Errorf("decode filter of endpoint %s: %w", e.ID, err)
		}
		e.Filter = b.Bytes()
	}
	if err := json.Unmarshal(headers, &e.Headers); err != nil {
		return e, fmt.Errorf("decode headers of endpoint %s: %w", e.ID, err)
	}
	return e, nil
}

// endpointStore implements webhook.EndpointStore in one transaction.
type endpointStore struct {
	tx pgx.Tx
}

var _ webhook.EndpointStore = (*endpointStore)(nil)

// endpointStates are the WHERE conditions of the list's state filter;
// deleted endpoints are disabled too (a CHECK), so "disabled" excludes
// them.
var endpointStates = map[string]string{
	"":                    `deleted_at IS NULL`,
	webhook.StateEnabled:  `enabled AND failing_since IS NULL`,
	webhook.StateFailing:  `enabled AND failing_since IS NOT NULL`,
	webhook.StateDisabled: `NOT enabled AND deleted_at IS NULL`,
	webhook.StateDeleted:  `deleted_at IS NOT NULL`,
}

func (s *endpointStore) List(ctx context.Context, ownerID uuid.UUID, q webhook.EndpointQuery) ([]webhook.Endpoint, error) {
	cond, ok := endpointStates[q.State]
	if !ok {
		return nil, fmt.Errorf("list endpoints: unknown state %q", q.State)
	}
	// Filters are spelled into the SQL only when present, so each shape
	// keeps a plan of its own (the owner index for the default list).
	args := []any{ownerID, q.Limit}
	where := `owner_id = $1 AND ` + cond
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.EventType != "" {
		// Globs are over [a-z0-9_.*]: '*' becomes LIKE's '%', '_' is escaped.
		where += ` AND EXISTS (SELECT 1 FROM unnest(event_types) g
  WHERE ` + arg(q.EventType) + `::text LIKE replace(replace(g, '_', '\_'), '*', '%'))`
	}
	if q.URLContains != "" {
		where += ` AND strpos(lower(url), lower(` + arg(q.URLContains) + `::text)) > 0`
	}
	cmp, dir := ">", "ASC"
	if q.Desc {
		cmp, dir = "<", "DESC"
	}
	order := `id ` + dir
	if q.Sort == webhook.SortURL {
		order = `url ` + dir + `, id ` + dir
		if q.After != nil {
			where += ` AND (url, id) ` + cmp + ` (` + arg(q.After.URL) + `::text, ` + arg(q.After.ID) + `::uuid)`
		}
	} else if q.After != nil {
		where += ` AND id ` + cmp + ` ` + arg(q.After.ID) + `::uuid`
	}
	rows, err := s.tx.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE `+where+` ORDER BY `+order+` LIMIT $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	defer rows.Close()
	var out []webhook.Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("list endpoints: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	return out, nil
}

func (s *endpointStore) Get(ctx context.Context, ownerID, id uuid.UUID) (webhook.Endpoint, error) {
	return s.get(ctx, ownerID, id, "")
}

// get reads one endpoint; lock is appended to the query (" FOR UPDATE").
func (s *endpointStore) get(ctx context.Context, ownerID, id uuid.UUID, lock string) (webhook.Endpoint, error) {
	e, err := scanEndpoint(s.tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE owner_id = $1 AND id = $2`+lock, ownerID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, notFound()
	}
	if err != nil {
		return e, fmt.Errorf("get endpoint %s: %w", id, err)
	}
	return e, nil
}

func (s *endpointStore) Count(ctx context.Context, ownerID uuid.UUID) (int, error) {
	var n int
	if err := s.tx.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE owner_id = $1 AND deleted_at IS NULL`, ownerID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count endpoints: %w", err)
	}
	return n, nil
}

// maxSlots is the number of lease rows every endpoint gets; max_in_flight
// says how many of them are used, so changing it needs no row changes.
const maxSlots = webhook.MaxInFlightCap

func headersJSON(h map[string]string) ([]byte, error) {
	if h == nil {
		h = map[string]string{}
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode headers: %w", err)
	}
	return b, nil
}

func (s *endpointStore) Insert(ctx context.Context, e webhook.Endpoint) error {
	headers, err := headersJSON(e.Headers)
	if err != nil {
		return err
	}
	_, err = s.tx.Exec(ctx, `WITH e AS (
  INSERT INTO webhook_endpoints (id, owner_id, url, description, event_types, embed_id, headers, max_in_flight,
    enabled, disabled_reason, failing_since, secret_enc, prev_secret_enc, prev_secret_until, created_at, updated_at,
    timeout_seconds, max_attempts, signing, public_key, prev_public_key, filter, rate_limit_per_second, rate_limit_burst, created_by, updated_by)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)
  RETURNING id)
INSERT INTO webhook_endpoint_leases (endpoint_id, slot)
SELECT e.id, s FROM e, generate_series(0, $17::int - 1) AS s`,
		e.ID, e.OwnerID, e.URL, e.Description, e.EventTypes, e.EmbedID, headers, e.MaxInFlight,
		e.Enabled, e.DisabledReason, e.FailingSince, e.SecretSealed, e.PrevSecretSealed, e.PrevSecretUntil,
		e.CreatedAt, e.UpdatedAt, maxSlots, e.TimeoutSeconds, e.MaxAttempts, signingOf(e), textOrNull(e.PublicKey),
		textOrNull(e.PrevPublicKey), filterOrNull(e.Filter), intOrNull(e.RateLimitPerSecond), intOrNull(e.RateLimitBurst),
		textOrNull(e.CreatedBy), textOrNull(e.UpdatedBy))
	if err != nil {
		return fmt.Errorf("insert endpoint: %w", err)
	}
	return nil
}

// Update reads the endpoint under its row lock, so concurrent changes of
// one endpoint apply one after the other, and writes what fn leaves.
func (s *endpointStore) Update(ctx context.Context, ownerID, id uuid.UUID, fn func(*webhook.Endpoint) error) error {
	e, err := s.get(ctx, ownerID, id, ` FOR UPDATE`)
	if err != nil {
		return err
	}
	if err := fn(&e); err != nil {
		return err
	}
	headers, err := headersJSON(e.Headers)
	if err != nil {
		return err
	}
	tag, err := s.tx.Exec(ctx, `UPDATE webhook_endpoints SET
  url = $3, description = $4, event_types = $5, embed_id = $6, headers = $7, max_in_flight = $8,
  enabled = $9, disabled_reason = $10, failing_since = $11, secret_enc = $12, prev_secret_enc = $13,
  prev_secret_until = $14, updated_at = $15, timeout_seconds = $16, max_attempts = $17,
  public_key = $18, prev_public_key = $19, filter = $20, rate_limit_per_second = $21, rate_limit_burst = $22, updated_by = $23
WHERE owner_id = $1 AND id = $2 AND deleted_at IS NULL`,
		ownerID, id, e.URL, e.Description, e.EventTypes, e.EmbedID, headers, e.MaxInFlight,
		e.Enabled, e.DisabledReason, e.FailingSince, e.SecretSealed, e.PrevSecretSealed, e.PrevSecretUntil,
		e.UpdatedAt, e.TimeoutSeconds, e.MaxAttempts, textOrNull(e.PublicKey), textOrNull(e.PrevPublicKey), filterOrNull(e.Filter),
		intOrNull(e.RateLimitPerSecond), intOrNull(e.RateLimitBurst), textOrNull(e.UpdatedBy))
	if err != nil {
		return fmt.Errorf("update endpoint %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// ReasonDeleted is the disabled_reason of a deleted endpoint.
const ReasonDeleted = "deleted by the owner"

// Delete marks the endpoint deleted and disabled; its lease slots, attempts
// and River jobs stay (queued deliveries are discarded when they run: the
// endpoint is disabled) until PurgeDeletedEndpoints removes the row.
func (s *endpointStore) Delete(ctx context.Context, ownerID, id uuid.UUID, at time.Time) error {
	tag, err := s.tx.Exec(ctx, `UPDATE webhook_endpoints
SET deleted_at = $3, enabled = false, disabled_reason = $4, updated_at = $3
WHERE owner_id = $1 AND id = $2 AND deleted_at IS NULL`, ownerID, id, at, ReasonDeleted)
	if err != nil {
		return fmt.Errorf("delete endpoint %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// timePtr returns nil for the zero time.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// signingOf is e's signing scheme, hmac-sha256 when unset.
func signingOf(e webhook.Endpoint) string {
	if e.Signing == "" {
		return webhook.SigningHMAC
	}
	return e.Signing
}

// textOrNull stores "" as NULL.
func textOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// filterOrNull stores an absent filter as NULL, a filter as jsonb text.
func filterOrNull(f json.RawMessage) *string {
	if len(f) == 0 {
		return nil
	}
	s := string(f)
	return &s
}

// intOrNull stores 0 as NULL: a setting that is off.
func intOrNull(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
