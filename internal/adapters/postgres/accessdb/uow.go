// Package accessdb is the PostgreSQL adapter of the access domain: its unit of
// work over one pgx transaction and the stores of roles, codes, embeds and
// access requests. It also answers which owners the instance has, for the
// public routes that act for the instance's owner.
package accessdb

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
)

// NewUnitOfWork returns the access domain's unit of work over pool; its Tx
// records events with rec bound to the transaction.
func NewUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[access.Tx] {
	return uow.New(pool, rec, func(tx pgx.Tx, rec domain.Recorder) access.Tx { return &txStores{tx: tx, rec: rec} })
}

type txStores struct {
	tx  pgx.Tx
	rec domain.Recorder
}

func (t *txStores) Roles() access.RoleStore       { return &roleStore{t.tx} }
func (t *txStores) Codes() access.CodeStore       { return &codeStore{t.tx} }
func (t *txStores) Embeds() access.EmbedStore     { return &embedStore{t.tx} }
func (t *txStores) Requests() access.RequestStore { return &requestStore{t.tx} }
func (t *txStores) Recorder() domain.Recorder     { return t.rec }

// translate maps storage errors to domain errors; what names the row kind
// for a not-found message.
func translate(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.NotFound("NOT_FOUND", "no such "+what)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.ConstraintName {
		case "access_roles_owner_name_key":
			return domain.Conflict("ROLE_NAME_TAKEN", "you already have a role of that name").WithField("name")
		case "access_codes_role_fkey":
			// Inserting a code under a missing role; deleting a role in use
			// is told apart by roleStore.Delete.
			return domain.Unprocessable("UNKNOWN_ROLE", "role_id names no role of yours").WithField("role_id")
		case "access_embeds_code_fkey":
			return domain.Unprocessable("UNKNOWN_CODE", "code_id names no code of yours").WithField("code_id")
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
