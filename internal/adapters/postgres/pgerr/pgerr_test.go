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
