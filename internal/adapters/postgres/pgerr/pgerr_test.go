package pgerr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

func TestIs(t *testing.T) {
	t.Parallel()
	unique := fmt.Errorf("insert: %w", &pgconn.PgError{Code: UniqueViolation, ConstraintName: "owners_email_lower_key"})
	cases := []struct {
		name             string
		err              error
		code, constraint string
		want             bool
	}{
		{"code and constraint", unique, UniqueViolation, "owners_email_lower_key", true},
		{"code, any constraint", unique, UniqueViolation, "", true},
		{"another constraint", unique, UniqueViolation, "other_key", false},
		{"another code", unique, ForeignKeyViolation, "", false},
		{"not a PostgreSQL error", errors.New("boom"), UniqueViolation, "", false},
		{"nil", nil, UniqueViolation, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, Is(c.err, c.code, c.constraint))
		})
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	deadlock := fmt.Errorf("finish: %w", &pgconn.PgError{Code: DeadlockDetected})
	serial := &pgconn.PgError{Code: SerializationFailure}
	unique := &pgconn.PgError{Code: UniqueViolation}
	cases := []struct {
		name  string
		errs  []error // what each call returns, the last repeated
		tries int
		calls int
		want  error
	}{
		{"success at once", []error{nil}, 3, 1, nil},
		{"a deadlock, then success", []error{deadlock, nil}, 3, 2, nil},
		{"a serialization failure, then success", []error{serial, nil}, 3, 2, nil},
		{"deadlocks up to the bound", []error{deadlock}, 3, 3, deadlock},
		{"another error is not retried", []error{unique, nil}, 3, 1, unique},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := Retry(c.tries, func() error {
				e := c.errs[min(calls, len(c.errs)-1)]
				calls++
				return e
			})
			require.Equal(t, c.calls, calls)
			require.Equal(t, c.want, err)
		})
	}
}
