package accessdb

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/domain"
)

type roleStore struct{ tx pgx.Tx }

var _ access.RoleStore = (*roleStore)(nil)

const roleColumns = `id, owner_id, name, uri_globs, published_only, created_at, updated_at`

func scanRole(row pgx.Row) (access.Role, error) {
	var r access.Role
	err := row.Scan(&r.ID, &r.OwnerID, &r.Name, &r.URIGlobs, &r.PublishedOnly, &r.CreatedAt, &r.UpdatedAt)
	utc(&r.CreatedAt, &r.UpdatedAt)
	return r, err
}

func (s *roleStore) Insert(ctx context.Context, r access.Role) (access.Role, error) {
	out, err := scanRole(s.tx.QueryRow(ctx, `INSERT INTO access_roles (`+roleColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING `+roleColumns, r.ID, r.OwnerID, r.Name, nonNil(r.URIGlobs), r.PublishedOnly, r.CreatedAt, r.UpdatedAt))
	return out, translate(err, "role")
}

func (s *roleStore) Get(ctx context.Context, ownerID, id uuid.UUID) (access.Role, error) {
	out, err := scanRole(s.tx.QueryRow(ctx, `SELECT `+roleColumns+` FROM access_roles WHERE owner_id = $1 AND id = $2`, ownerID, id))
	return out, translate(err, "role")
}

// Update reads the role under its row lock, so concurrent changes of one
// role apply one after the other, and writes what fn leaves.
func (s *roleStore) Update(ctx context.Context, ownerID, id uuid.UUID, fn func(*access.Role) error) (access.Role, error) {
	r, err := scanRole(s.tx.QueryRow(ctx, `SELECT `+roleColumns+` FROM access_roles WHERE owner_id = $1 AND id = $2 FOR UPDATE`, ownerID, id))
	if err != nil {
		return access.Role{}, translate(err, "role")
	}
	if err := fn(&r); err != nil {
		return access.Role{}, err
	}
	out, err := scanRole(s.tx.QueryRow(ctx, `UPDATE access_roles SET name = $3, uri_globs = $4, published_only = $5, updated_at = $6
WHERE owner_id = $1 AND id = $2 RETURNING `+roleColumns, ownerID, id, r.Name, nonNil(r.URIGlobs), r.PublishedOnly, r.UpdatedAt))
	return out, translate(err, "role")
}

func (s *roleStore) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	tag, err := s.tx.Exec(ctx, `DELETE FROM access_roles WHERE owner_id = $1 AND id = $2`, ownerID, id)
	if pgerr.Is(err, pgerr.ForeignKeyViolation, "") { // codes use it
		return domain.Conflict("ROLE_IN_USE", "codes use this role; it cannot be deleted")
	}
	if err != nil {
		return translate(err, "role")
	}
	if tag.RowsAffected() == 0 {
		return translate(pgx.ErrNoRows, "role")
	}
	return nil
}

func (s *roleStore) List(ctx context.Context, ownerID uuid.UUID) ([]access.Role, error) {
	rows, err := s.tx.Query(ctx, `SELECT `+roleColumns+` FROM access_roles WHERE owner_id = $1 ORDER BY name, id`, ownerID)
	if err != nil {
		return nil, translate(err, "roles")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (access.Role, error) { return scanRole(r) })
	return out, translate(err, "roles")
}

type codeStore struct{ tx pgx.Tx }

var _ access.CodeStore = (*codeStore)(nil)

const codeColumns = `id, owner_id, role_id, label, prefix, code_hash, deny_globs, expires_at, revoked_at, request_id,
redeem_count, last_redeemed_at, created_at`

func scanCode(row pgx.Row) (access.Code, error) {
	var c access.Code
	err := row.Scan(&c.ID, &c.OwnerID, &c.RoleID, &c.Label, &c.Prefix, &c.Hash, &c.DenyGlobs, &c.ExpiresAt, &c.RevokedAt,
		&c.RequestID, &c.RedeemCount, &c.LastRedeemedAt, &c.CreatedAt)
	utcCode(&c)
	return c, err
}

func (s *codeStore) Insert(ctx context.Context, c access.Code) (access.Code, error) {
	out, err := scanCode(s.tx.QueryRow(ctx, `INSERT INTO access_codes (`+codeColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING `+codeColumns,
		c.ID, c.OwnerID, c.RoleID, c.Label, c.Prefix, c.Hash, nonNil(c.DenyGlobs), c.ExpiresAt, c.RevokedAt, c.RequestID,
		c.RedeemCount, c.LastRedeemedAt, c.CreatedAt))
	return out, translate(err, "code")
}

func (s *codeStore) Get(ctx context.Context, ownerID, id uuid.UUID) (access.Code, error) {
	out, err := scanCode(s.tx.QueryRow(ctx, `SELECT `+codeColumns+` FROM access_codes WHERE owner_id = $1 AND id = $2`, ownerID, id))
	return out, translate(err, "code")
}

func (s *codeStore) GetByHash(ctx context.Context, hash []byte) (access.Code, error) {
	out, err := scanCode(s.tx.QueryRow(ctx, `SELECT `+codeColumns+` FROM access_codes WHERE code_hash = $1 FOR UPDATE`, hash))
	return out, translate(err, "code")
}

func (s *codeStore) SetRevoked(ctx context.Context, ownerID, id uuid.UUID, at time.Time) (access.Code, error) {
	out, err := scanCode(s.tx.QueryRow(ctx, `UPDATE access_codes SET revoked_at = coalesce(revoked_at, $3)
WHERE owner_id = $1 AND id = $2 RETURNING `+codeColumns, ownerID, id, at))
	return out, translate(err, "code")
}

func (s *codeStore) MarkRedeemed(ctx context.Context, id uuid.UUID, at time.Time) (access.Code, error) {
	out, err := scanCode(s.tx.QueryRow(ctx, `UPDATE access_codes SET redeem_count = redeem_count + 1, last_redeemed_at = $2
WHERE id = $1 RETURNING `+codeColumns, id, at))
	return out, translate(err, "code")
}

func (s *codeStore) List(ctx context.Context, ownerID uuid.UUID, limit int, after *access.Cursor) ([]access.Code, error) {
	q := `SELECT ` + codeColumns + ` FROM access_codes WHERE owner_id = $1`
	args := []any{ownerID, limit + 1}
	if after != nil {
		q += ` AND (created_at, id) < ($3, $4)`
		args = append(args, after.CreatedAt, after.ID)
	}
	rows, err := s.tx.Query(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, translate(err, "codes")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (access.Code, error) { return scanCode(r) })
	return out, translate(err, "codes")
}

type embedStore struct{ tx pgx.Tx }

var _ access.EmbedStore = (*embedStore)(nil)

const embedColumns = `id, owner_id, code_id, name, created_at`

func scanEmbed(row pgx.Row) (access.Embed, error) {
	var e access.Embed
	err := row.Scan(&e.ID, &e.OwnerID, &e.CodeID, &e.Name, &e.CreatedAt)
	utc(&e.CreatedAt)
	return e, err
}

func (s *embedStore) Insert(ctx context.Context, e access.Embed) (access.Embed, error) {
	out, err := scanEmbed(s.tx.QueryRow(ctx, `INSERT INTO access_embeds (`+embedColumns+`) VALUES ($1, $2, $3, $4, $5)
RETURNING `+embedColumns, e.ID, e.OwnerID, e.CodeID, e.Name, e.CreatedAt))
	return out, translate(err, "embed")
}

func (s *embedStore) Get(ctx context.Context, ownerID, id uuid.UUID) (access.Embed, error) {
	out, err := scanEmbed(s.tx.QueryRow(ctx, `SELECT `+embedColumns+` FROM access_embeds WHERE owner_id = $1 AND id = $2`, ownerID, id))
	return out, translate(err, "embed")
}

func (s *embedStore) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	tag, err := s.tx.Exec(ctx, `DELETE FROM access_embeds WHERE owner_id = $1 AND id = $2`, ownerID, id)
	if err != nil {
		return translate(err, "embed")
	}
	if tag.RowsAffected() == 0 {
		return translate(pgx.ErrNoRows, "embed")
	}
	return nil
}

func (s *embedStore) List(ctx context.Context, ownerID uuid.UUID) ([]access.Embed, error) {
	rows, err := s.tx.Query(ctx, `SELECT `+embedColumns+` FROM access_embeds WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`, ownerID)
	if err != nil {
		return nil, translate(err, "embeds")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (access.Embed, error) { return scanEmbed(r) })
	return out, translate(err, "embeds")
}

// Scope reads the embed, its code and the code's role in one statement, so
// the decision sees one consistent state.
func (s *embedStore) Scope(ctx context.Context, embedID uuid.UUID) (access.EmbedScope, error) {
	var sc access.EmbedScope
	e, c, r := &sc.Embed, &sc.Code, &sc.Role
	err := s.tx.QueryRow(ctx, `SELECT e.id, e.owner_id, e.code_id, e.name, e.created_at,
    c.id, c.owner_id, c.role_id, c.label, c.prefix, c.code_hash, c.deny_globs, c.expires_at, c.revoked_at, c.request_id,
    c.redeem_count, c.last_redeemed_at, c.created_at,
    r.id, r.owner_id, r.name, r.uri_globs, r.published_only, r.created_at, r.updated_at
FROM access_embeds e
JOIN access_codes c ON c.id = e.code_id AND c.owner_id = e.owner_id
JOIN access_roles r ON r.id = c.role_id AND r.owner_id = c.owner_id
WHERE e.id = $1`, embedID).Scan(
		&e.ID, &e.OwnerID, &e.CodeID, &e.Name, &e.CreatedAt,
		&c.ID, &c.OwnerID, &c.RoleID, &c.Label, &c.Prefix, &c.Hash, &c.DenyGlobs, &c.ExpiresAt, &c.RevokedAt, &c.RequestID,
		&c.RedeemCount, &c.LastRedeemedAt, &c.CreatedAt,
		&r.ID, &r.OwnerID, &r.Name, &r.URIGlobs, &r.PublishedOnly, &r.CreatedAt, &r.UpdatedAt)
	utc(&e.CreatedAt, &r.CreatedAt, &r.UpdatedAt)
	utcCode(c)
	return sc, translate(err, "embed")
}

type requestStore struct{ tx pgx.Tx }

var _ access.RequestStore = (*requestStore)(nil)

const requestColumns = `id, owner_id, name, email, message, status, code_id, client_key, created_at, updated_at`

func scanRequest(row pgx.Row) (access.AccessRequest, error) {
	var r access.AccessRequest
	var status string
	err := row.Scan(&r.ID, &r.OwnerID, &r.Name, &r.Email, &r.Message, &status, &r.CodeID, &r.ClientKey, &r.CreatedAt, &r.UpdatedAt)
	r.Status = access.RequestStatus(status)
	utc(&r.CreatedAt, &r.UpdatedAt)
	return r, err
}

func (s *requestStore) Insert(ctx context.Context, r access.AccessRequest) (access.AccessRequest, error) {
	out, err := scanRequest(s.tx.QueryRow(ctx, `INSERT INTO access_requests (`+requestColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING `+requestColumns,
		r.ID, r.OwnerID, r.Name, r.Email, r.Message, string(r.Status), r.CodeID, r.ClientKey, r.CreatedAt, r.UpdatedAt))
	return out, translate(err, "access request")
}

func (s *requestStore) GetForUpdate(ctx context.Context, ownerID, id uuid.UUID) (access.AccessRequest, error) {
	out, err := scanRequest(s.tx.QueryRow(ctx, `SELECT `+requestColumns+` FROM access_requests WHERE owner_id = $1 AND id = $2 FOR UPDATE`, ownerID, id))
	return out, translate(err, "access request")
}

func (s *requestStore) SetStatus(ctx context.Context, r access.AccessRequest) (access.AccessRequest, error) {
	out, err := scanRequest(s.tx.QueryRow(ctx, `UPDATE access_requests SET status = $3, code_id = $4, updated_at = $5
WHERE owner_id = $1 AND id = $2 RETURNING `+requestColumns, r.OwnerID, r.ID, string(r.Status), r.CodeID, r.UpdatedAt))
	return out, translate(err, "access request")
}

func (s *requestStore) List(ctx context.Context, ownerID uuid.UUID, status access.RequestStatus, limit int, after *access.Cursor) ([]access.AccessRequest, error) {
	q := `SELECT ` + requestColumns + ` FROM access_requests WHERE owner_id = $1`
	args := []any{ownerID, limit + 1}
	if status != "" {
		args = append(args, string(status))
		q += ` AND status = $3`
	}
	if after != nil {
		args = append(args, after.CreatedAt, after.ID)
		q += ` AND (created_at, id) < ($` + itoa(len(args)-1) + `, $` + itoa(len(args)) + `)`
	}
	rows, err := s.tx.Query(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, translate(err, "access requests")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (access.AccessRequest, error) { return scanRequest(r) })
	return out, translate(err, "access requests")
}

func (s *requestStore) CountSince(ctx context.Context, ownerID uuid.UUID, clientKey string, since time.Time) (int, error) {
	var n int
	var err error
	if clientKey == "" {
		err = s.tx.QueryRow(ctx, `SELECT count(*) FROM access_requests WHERE owner_id = $1 AND created_at >= $2`, ownerID, since).Scan(&n)
	} else {
		err = s.tx.QueryRow(ctx, `SELECT count(*) FROM access_requests WHERE owner_id = $1 AND client_key = $2 AND created_at >= $3`,
			ownerID, clientKey, since).Scan(&n)
	}
	return n, translate(err, "access requests")
}

func itoa(i int) string { return strconv.Itoa(i) }

// utc puts scanned times in UTC, as the domain writes them, so a value read
// back equals the value written.
func utc(ts ...*time.Time) {
	for _, t := range ts {
		if t != nil {
			*t = t.UTC()
		}
	}
}

func utcCode(c *access.Code) {
	utc(&c.CreatedAt, c.ExpiresAt, c.RevokedAt, c.LastRedeemedAt)
}
