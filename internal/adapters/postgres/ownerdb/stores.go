package ownerdb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// sessionStore implements owner.SessionStore.
type sessionStore struct{ tx pgx.Tx }

func (s sessionStore) Create(ctx context.Context, x owner.Session) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO owner_sessions (id, owner_id, token_hash, created_at, expires_at, ip, user_agent)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, x.ID, x.OwnerID, x.TokenHash[:], x.CreatedAt, x.ExpiresAt, x.IP, x.UserAgent)
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

func (s sessionStore) ByTokenHash(ctx context.Context, h owner.Digest) (owner.Session, error) {
	var (
		x   owner.Session
		raw []byte
	)
	err := s.tx.QueryRow(ctx, `SELECT id, owner_id, token_hash, created_at, expires_at, ip, user_agent
FROM owner_sessions WHERE token_hash = $1`, h[:]).Scan(&x.ID, &x.OwnerID, &raw, &x.CreatedAt, &x.ExpiresAt, &x.IP, &x.UserAgent)
	if err != nil {
		return owner.Session{}, notFound(err, "session")
	}
	x.CreatedAt, x.ExpiresAt = utc(x.CreatedAt), utc(x.ExpiresAt)
	if x.TokenHash, err = digest(raw); err != nil {
		return owner.Session{}, err
	}
	return x, nil
}

func (s sessionStore) DeleteByTokenHash(ctx context.Context, h owner.Digest) error {
	if _, err := s.tx.Exec(ctx, `DELETE FROM owner_sessions WHERE token_hash = $1`, h[:]); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

func (s sessionStore) DeleteForOwner(ctx context.Context, ownerID uuid.UUID) error {
	if _, err := s.tx.Exec(ctx, `DELETE FROM owner_sessions WHERE owner_id = $1`, ownerID); err != nil {
		return fmt.Errorf("delete sessions of owner: %w", err)
	}
	return nil
}

func (s sessionStore) ListForOwner(ctx context.Context, ownerID uuid.UUID, now time.Time) ([]owner.Session, error) {
	rows, err := s.tx.Query(ctx, `SELECT id, owner_id, token_hash, created_at, expires_at, ip, user_agent
FROM owner_sessions WHERE owner_id = $1 AND expires_at > $2 ORDER BY created_at DESC, id DESC`, ownerID, now)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []owner.Session
	for rows.Next() {
		var x owner.Session
		var raw []byte
		if err := rows.Scan(&x.ID, &x.OwnerID, &raw, &x.CreatedAt, &x.ExpiresAt, &x.IP, &x.UserAgent); err != nil {
			return nil, fmt.Errorf("scan session: %w", err)
		}
		x.CreatedAt, x.ExpiresAt = utc(x.CreatedAt), utc(x.ExpiresAt)
		if x.TokenHash, err = digest(raw); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

func (s sessionStore) DeleteOne(ctx context.Context, ownerID, id uuid.UUID) error {
	tag, err := s.tx.Exec(ctx, `DELETE FROM owner_sessions WHERE owner_id = $1 AND id = $2`, ownerID, id)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(pgx.ErrNoRows, "session")
	}
	return nil
}

func (s sessionStore) DeleteExpired(ctx context.Context, now time.Time) error {
	if _, err := s.tx.Exec(ctx, `DELETE FROM owner_sessions WHERE expires_at <= $1`, now); err != nil {
		return fmt.Errorf("delete expired sessions: %w", err)
	}
	return nil
}

// keyStore implements owner.APIKeyStore.
type keyStore struct{ tx pgx.Tx }

const keyColumns = `id, owner_id, name, prefix, key_hash, created_at, last_used_at, revoked_at, scopes`

func scanKey(row pgx.Row) (owner.APIKey, error) {
	var (
		k      owner.APIKey
		raw    []byte
		scopes []string
	)
	if err := row.Scan(&k.ID, &k.OwnerID, &k.Name, &k.Prefix, &raw, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt, &scopes); err != nil {
		return owner.APIKey{}, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = utc(k.CreatedAt), utcPtr(k.LastUsedAt), utcPtr(k.RevokedAt)
	k.Scopes = scopesOf(scopes)
	var err error
	k.KeyHash, err = digest(raw)
	return k, err
}

// scopesOf turns the scopes column into a key's scopes: NULL (a full key)
// stays nil, so a full key never reads as one limited to nothing.
func scopesOf(col []string) op.Scopes {
	if col == nil {
		return nil
	}
	out := make(op.Scopes, len(col))
	for i, s := range col {
		out[i] = op.Scope(s)
	}
	return out
}

// scopesColumn is the scopes column's value of a key's scopes: NULL for a
// full key.
func scopesColumn(scopes op.Scopes) []string {
	if scopes == nil {
		return nil
	}
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

func (s keyStore) Create(ctx context.Context, k owner.APIKey) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		k.ID, k.OwnerID, k.Name, k.Prefix, k.KeyHash[:], k.CreatedAt, k.LastUsedAt, k.RevokedAt, scopesColumn(k.Scopes))
	if err != nil {
		return fmt.Errorf("insert api key: %w", err)
	}
	return nil
}

func (s keyStore) ByHash(ctx context.Context, h owner.Digest) (owner.APIKey, error) {
	k, err := scanKey(s.tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE key_hash = $1`, h[:]))
	if err != nil {
		return owner.APIKey{}, notFound(err, "api key")
	}
	return k, nil
}

func (s keyStore) Get(ctx context.Context, ownerID, id uuid.UUID) (owner.APIKey, error) {
	k, err := scanKey(s.tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE owner_id = $1 AND id = $2`, ownerID, id))
	if err != nil {
		return owner.APIKey{}, notFound(err, "api key")
	}
	return k, nil
}

func (s keyStore) List(ctx context.Context, ownerID uuid.UUID) ([]owner.APIKey, error) {
	rows, err := s.tx.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	out := []owner.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

func (s keyStore) Revoke(ctx context.Context, ownerID, id uuid.UUID, at time.Time) error {
	tag, err := s.tx.Exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE owner_id = $1 AND id = $2`, ownerID, id, at)
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(pgx.ErrNoRows, "api key")
	}
	return nil
}

func (s keyStore) Touch(ctx context.Context, id uuid.UUID, at, notBefore time.Time) error {
	_, err := s.tx.Exec(ctx, `UPDATE api_keys SET last_used_at = $2
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`, id, at, notBefore)
	if err != nil {
		return fmt.Errorf("touch api key: %w", err)
	}
	return nil
}

// attemptStore implements owner.AttemptStore.
type attemptStore struct{ tx pgx.Tx }

func (s attemptStore) Add(ctx context.Context, a owner.Attempt) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO auth_attempts (kind, ip, email, owner_id, occurred_at) VALUES ($1, $2, $3, $4, $5)`,
		string(a.Kind), a.IP, a.Email, a.OwnerID, a.At)
	if err != nil {
		return fmt.Errorf("insert attempt: %w", err)
	}
	return nil
}

func (s attemptStore) CountByIP(ctx context.Context, kind owner.AttemptKind, ip string, since time.Time) (int, error) {
	var n int
	err := s.tx.QueryRow(ctx, `SELECT count(*) FROM auth_attempts WHERE kind = $1 AND ip = $2 AND occurred_at >= $3`,
		string(kind), ip, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count attempts by ip: %w", err)
	}
	return n, nil
}

func (s attemptStore) CountByEmail(ctx context.Context, kind owner.AttemptKind, email string, since time.Time) (int, error) {
	var n int
	err := s.tx.QueryRow(ctx, `SELECT count(*) FROM auth_attempts WHERE kind = $1 AND email = $2 AND occurred_at >= $3`,
		string(kind), email, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count attempts by email: %w", err)
	}
	return n, nil
}

func (s attemptStore) CountByEmailAndIP(ctx context.Context, kind owner.AttemptKind, email, ip string, since time.Time) (int, error) {
	var n int
	err := s.tx.QueryRow(ctx, `SELECT count(*) FROM auth_attempts WHERE kind = $1 AND email = $2 AND ip = $3 AND occurred_at >= $4`,
		string(kind), email, ip, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count attempts by email and ip: %w", err)
	}
	return n, nil
}

func (s attemptStore) TargetedOwners(ctx context.Context, kind owner.AttemptKind, ip string, since time.Time) ([]uuid.UUID, error) {
	rows, err := s.tx.Query(ctx, `SELECT DISTINCT owner_id FROM auth_attempts
WHERE kind = $1 AND ip = $2 AND occurred_at >= $3 AND owner_id IS NOT NULL ORDER BY owner_id`, string(kind), ip, since)
	if err != nil {
		return nil, fmt.Errorf("targeted owners: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("targeted owners: %w", err)
	}
	return ids, nil
}

func (s attemptStore) DeleteByIP(ctx context.Context, kind owner.AttemptKind, ip string) error {
	if _, err := s.tx.Exec(ctx, `DELETE FROM auth_attempts WHERE kind = $1 AND ip = $2`, string(kind), ip); err != nil {
		return fmt.Errorf("delete attempts of ip: %w", err)
	}
	return nil
}

func (s attemptStore) DeleteBefore(ctx context.Context, t time.Time) error {
	if _, err := s.tx.Exec(ctx, `DELETE FROM auth_attempts WHERE occurred_at < $1`, t); err != nil {
		return fmt.Errorf("delete old attempts: %w", err)
	}
	return nil
}

// banStore implements owner.BanStore.
type banStore struct{ tx pgx.Tx }

const banColumns = `id, owner_id, ip, reason, created_at, expires_at, lifted_at`

func scanBan(row pgx.Row) (owner.IPBan, error) {
	var b owner.IPBan
	err := row.Scan(&b.ID, &b.OwnerID, &b.IP, &b.Reason, &b.CreatedAt, &b.ExpiresAt, &b.LiftedAt)
	b.CreatedAt, b.ExpiresAt, b.LiftedAt = utc(b.CreatedAt), utc(b.ExpiresAt), utcPtr(b.LiftedAt)
	return b, err
}

func (s banStore) Add(ctx context.Context, b owner.IPBan) (bool, error) {
	// An expired ban is still "open" for the unique index; close it first
	// so the new one can take its place.
	if _, err := s.tx.Exec(ctx, `UPDATE ip_bans SET lifted_at = expires_at
WHERE owner_id = $1 AND ip = $2 AND lifted_at IS NULL AND expires_at <= $3`, b.OwnerID, b.IP, b.CreatedAt); err != nil {
		return false, fmt.Errorf("close expired ban: %w", err)
	}
	tag, err := s.tx.Exec(ctx, `INSERT INTO ip_bans (`+banColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (owner_id, ip) WHERE lifted_at IS NULL DO NOTHING`,
		b.ID, b.OwnerID, b.IP, b.Reason, b.CreatedAt, b.ExpiresAt, b.LiftedAt)
	if err != nil {
		return false, fmt.Errorf("insert ban: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (s banStore) ActiveIPs(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := s.tx.Query(ctx, `SELECT DISTINCT ip FROM ip_bans WHERE lifted_at IS NULL AND expires_at > $1 ORDER BY ip`, now)
	if err != nil {
		return nil, fmt.Errorf("active banned ips: %w", err)
	}
	ips, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("active banned ips: %w", err)
	}
	if ips == nil {
		ips = []string{}
	}
	return ips, nil
}

func (s banStore) ListActive(ctx context.Context, ownerID uuid.UUID, now time.Time, after *owner.BanCursor, limit int) ([]owner.IPBan, error) {
	var (
		afterAt *time.Time
		afterID *uuid.UUID
	)
	if after != nil {
		afterAt, afterID = &after.CreatedAt, &after.ID
	}
	rows, err := s.tx.Query(ctx, `SELECT `+banColumns+` FROM ip_bans
WHERE owner_id = $1 AND lifted_at IS NULL AND expires_at > $2
  AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4::uuid))
ORDER BY created_at DESC, id DESC LIMIT $5`, ownerID, now, afterAt, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list bans: %w", err)
	}
	defer rows.Close()
	out := []owner.IPBan{}
	for rows.Next() {
		b, err := scanBan(rows)
		if err != nil {
			return nil, fmt.Errorf("list bans: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list bans: %w", err)
	}
	return out, nil
}

func (s banStore) Lift(ctx context.Context, ownerID, id uuid.UUID, now time.Time) error {
	tag, err := s.tx.Exec(ctx, `UPDATE ip_bans SET lifted_at = $3
WHERE owner_id = $1 AND id = $2 AND lifted_at IS NULL AND expires_at > $3`, ownerID, id, now)
	if err != nil {
		return fmt.Errorf("lift ban: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(pgx.ErrNoRows, "ip ban")
	}
	return nil
}

// recoveryStore implements owner.RecoveryStore.
type recoveryStore struct{ tx pgx.Tx }

func (s recoveryStore) Create(ctx context.Context, t owner.RecoveryToken) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO recovery_tokens (id, owner_id, token_hash, created_at, expires_at, used_at)
VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.OwnerID, t.TokenHash[:], t.CreatedAt, t.ExpiresAt, t.UsedAt)
	if err != nil {
		return fmt.Errorf("insert recovery token: %w", err)
	}
	return nil
}

func (s recoveryStore) Consume(ctx context.Context, h owner.Digest, now time.Time) (owner.RecoveryToken, error) {
	var (
		t   owner.RecoveryToken
		raw []byte
	)
	// One UPDATE … RETURNING: of two concurrent consumers, the second waits
	// for the first's row lock, then sees used_at set and matches nothing.
	err := s.tx.QueryRow(ctx, `UPDATE recovery_tokens SET used_at = $2
WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
RETURNING id, owner_id, token_hash, created_at, expires_at, used_at`, h[:], now).
		Scan(&t.ID, &t.OwnerID, &raw, &t.CreatedAt, &t.ExpiresAt, &t.UsedAt)
	if err != nil {
		return owner.RecoveryToken{}, notFound(err, "recovery token")
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = utc(t.CreatedAt), utc(t.ExpiresAt), utcPtr(t.UsedAt)
	if t.TokenHash, err = digest(raw); err != nil {
		return owner.RecoveryToken{}, err
	}
	return t, nil
}
