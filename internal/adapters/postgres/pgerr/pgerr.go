// Package pgerr tells PostgreSQL errors apart by SQLSTATE and constraint,
// for the postgres adapters that map them to domain errors.
package pgerr

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes the adapters translate.
const (
	UniqueViolation      = "23505"
	ForeignKeyViolation  = "23503"
	CheckViolation       = "23514"
	DeadlockDetected     = "40P01"
	SerializationFailure = "40001"
)

// Is reports whether err (or an error it wraps) is a PostgreSQL error with
// code and, when constraint is not empty, on that constraint.
func Is(err error, code, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code && (constraint == "" || pe.ConstraintName == constraint)
}

// Retry runs fn up to tries times while it fails because PostgreSQL
// cancelled it for a deadlock or a serialization failure: the cancelled
// statement or transaction changed nothing, so running it again is safe.
// It returns fn's last error.
func Retry(tries int, fn func() error) error {
	for try := 1; ; try++ {
		err := fn()
		if err == nil || try >= tries || !(Is(err, DeadlockDetected, "") || Is(err, SerializationFailure, "")) {
			return err
		}
	}
}

// Unreachable reports whether err means PostgreSQL could not be reached or
// the connection went away: a failed connect, a network error, a connection
// closed under the statement, or the server refusing work while it shuts
// down or starts up (SQLSTATE class 08, 57P01–57P03).
func Unreachable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	return pgconn.SafeToRetry(err)
}
