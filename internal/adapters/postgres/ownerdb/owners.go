// Package ownerdb is the PostgreSQL adapter of the owner domain: its
// UnitOfWork runs a use case in one pgx transaction and hands out the
// domain's stores, the event Recorder bound to that transaction, and a
// recovery outbox delivered after commit. Storage errors are translated
// into the domain's: pgx.ErrNoRows becomes domain.ErrNotFound, a taken email
// owner.ErrEmailTaken.
package ownerdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
)

// UnitOfWork implements owner.UnitOfWork over PostgreSQL.
type UnitOfWork struct {
	kit    *uow.UnitOfWork[*txn]
	mailer owner.RecoveryMailer
}

var _ owner.UnitOfWork = (*UnitOfWork)(nil)

// New returns a UnitOfWork over pool whose Tx records events with rec bound
// to the transaction. Recovery messages queued in a committed transaction go
// to mailer.
func New(pool *pgxpool.Pool, rec uow.Recorder, mailer owner.RecoveryMailer) *UnitOfWork {
	return &UnitOfWork{
		kit:    uow.New(pool, rec, func(tx pgx.Tx, rec domain.Recorder) *txn { return &txn{tx: tx, rec: rec} }),
		mailer: mailer,
	}
}

// Do runs fn in one transaction (uow.UnitOfWork.Do: committed when fn
// returns nil, fn's error returned as is), then delivers what fn queued on
// the outbox, only after a commit.
func (u *UnitOfWork) Do(ctx context.Context, fn func(tx owner.Tx) error) error {
	var t *txn
	err := u.kit.Do(ctx, func(x *txn) error {
		t = x
		defer func() { x.ended = true }()
		return fn(x)
	})
	if err != nil {
		return err
	}
	if u.mailer != nil {
		for _, m := range t.outbox {
			u.mailer.DeliverRecovery(ctx, m)
		}
	}
	return nil
}

var (
	_ owner.Tx             = (*txn)(nil)
	_ owner.OwnerStore     = ownerStore{}
	_ owner.SessionStore   = sessionStore{}
	_ owner.APIKeyStore    = keyStore{}
	_ owner.AttemptStore   = attemptStore{}
	_ owner.BanStore       = banStore{}
	_ owner.RecoveryStore  = recoveryStore{}
	_ owner.RecoveryOutbox = outbox{}
)

type txn struct {
	tx     pgx.Tx
	rec    domain.Recorder
	outbox []owner.RecoveryMessage
	ended  bool
}

func (t *txn) Owners() owner.OwnerStore      { return ownerStore{t.tx} }
func (t *txn) Sessions() owner.SessionStore  { return sessionStore{t.tx} }
func (t *txn) APIKeys() owner.APIKeyStore    { return keyStore{t.tx} }
func (t *txn) Attempts() owner.AttemptStore  { return attemptStore{t.tx} }
func (t *txn) Bans() owner.BanStore          { return banStore{t.tx} }
func (t *txn) Recovery() owner.RecoveryStore { return recoveryStore{t.tx} }
func (t *txn) Recorder() domain.Recorder     { return t.rec }
func (t *txn) Outbox() owner.RecoveryOutbox  { return outbox{t} }

// outbox keeps recovery messages in memory until commit: the token must not
// be stored in the clear, and a message of a rolled-back request must never
// go out.
type outbox struct{ t *txn }

func (o outbox) Enqueue(_ context.Context, m owner.RecoveryMessage) error {
	if o.t.ended {
		return errors.New("enqueue recovery message: transaction has ended")
	}
	o.t.outbox = append(o.t.outbox, m)
	return nil
}

// notFound translates pgx.ErrNoRows into the domain's not-found error.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func digest(b []byte) (owner.Digest, error) {
	var d owner.Digest
	if len(b) != len(d) {
		return d, fmt.Errorf("stored digest has %d bytes, want %d", len(b), len(d))
	}
	copy(d[:], b)
	return d, nil
}

// ownerStore implements owner.OwnerStore.
type ownerStore struct{ tx pgx.Tx }

const ownerColumns = `id, email, password_hash, created_at, updated_at, operator`

func scanOwner(row pgx.Row) (owner.Owner, error) {
	var o owner.Owner
	err := row.Scan(&o.ID, &o.Email, &o.PasswordHash, &o.CreatedAt, &o.UpdatedAt, &o.Operator)
	o.CreatedAt, o.UpdatedAt = utc(o.CreatedAt), utc(o.UpdatedAt)
	return o, err
}

func (s ownerStore) Create(ctx context.Context, o owner.Owner) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO owners (`+ownerColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		o.ID, o.Email, o.PasswordHash, o.CreatedAt, o.UpdatedAt, o.Operator)
	if pgerr.Is(err, pgerr.UniqueViolation, "owners_email_lower_key") {
		return owner.ErrEmailTaken
	}
	if err != nil {
		return fmt.Errorf("insert owner: %w", err)
	}
	return nil
}

func (s ownerStore) ByID(ctx context.Context, id uuid.UUID) (owner.Owner, error) {
	o, err := scanOwner(s.tx.QueryRow(ctx, `SELECT `+ownerColumns+` FROM owners WHERE id = $1`, id))
	if err != nil {
		return owner.Owner{}, notFound(err, "owner")
	}
	return o, nil
}

func (s ownerStore) ByEmail(ctx context.Context, email string) (owner.Owner, error) {
	o, err := scanOwner(s.tx.QueryRow(ctx, `SELECT `+ownerColumns+` FROM owners WHERE lower(email) = lower($1)`, email))
	if err != nil {
		return owner.Owner{}, notFound(err, "owner by email")
	}
	return o, nil
}

func (s ownerStore) UpdateEmail(ctx context.Context, id uuid.UUID, email string, at time.Time) error {
	tag, err := s.tx.Exec(ctx, `UPDATE owners SET email = $2, updated_at = $3 WHERE id = $1`, id, email, at)
	if pgerr.Is(err, pgerr.UniqueViolation, "owners_email_lower_key") {
		return owner.ErrEmailTaken
	}
	if err != nil {
		return fmt.Errorf("update owner email: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(pgx.ErrNoRows, "owner")
	}
	return nil
}

func (s ownerStore) UpdatePassword(ctx context.Context, id uuid.UUID, hash string, at time.Time) error {
	tag, err := s.tx.Exec(ctx, `UPDATE owners SET password_hash = $2, updated_at = $3 WHERE id = $1`, id, hash, at)
	if err != nil {
		return fmt.Errorf("update owner password: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(pgx.ErrNoRows, "owner")
	}
	return nil
}

func (s ownerStore) SetOperator(ctx context.Context, id uuid.UUID, operator bool, at time.Time) error {
	tag, err := s.tx.Exec(ctx, `UPDATE owners SET operator = $2, updated_at = $3 WHERE id = $1`, id, operator, at)
	if err != nil {
		return fmt.Errorf("update owner operator: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(pgx.ErrNoRows, "owner")
	}
	return nil
}

func (s ownerStore) Oldest(ctx context.Context) (owner.Owner, error) {
	o, err := scanOwner(s.tx.QueryRow(ctx, `SELECT `+ownerColumns+` FROM owners ORDER BY created_at, id LIMIT 1`))
	if err != nil {
		return owner.Owner{}, notFound(err, "oldest owner")
	}
	return o, nil
}

func (s ownerStore) Count(ctx context.Context) (int, error) {
	var n int
	if err := s.tx.QueryRow(ctx, `SELECT count(*) FROM owners`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count owners: %w", err)
	}
	return n, nil
}
