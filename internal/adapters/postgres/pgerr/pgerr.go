// Package pgerr tells PostgreSQL errors apart by SQLSTATE and constraint,
// for the postgres adapters that map them to domain errors.
package pgerr

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes the adapters translate.
const (
	UniqueViolation     = "23505"
	ForeignKeyViolation = "23503"
	CheckViolation      = "23514"
)

// Is reports whether err (or an error it wraps) is a PostgreSQL error with
// code and, when constraint is not empty, on that constraint.
func Is(err error, code, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code && (constraint == "" || pe.ConstraintName == constraint)
}
