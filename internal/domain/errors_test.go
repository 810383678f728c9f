package domain

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorsMatchByKindAndCode(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("load endpoint: %w", NotFound("NOT_FOUND", "endpoint 42"))
	require.ErrorIs(t, err, ErrNotFound)
	require.False(t, errors.Is(err, Conflict("NOT_FOUND", "x")))
	de := AsError(err)
	require.NotNil(t, de)
	require.Equal(t, KindNotFound, de.Kind)
	require.Nil(t, AsError(errors.New("plain")))
	require.Equal(t, "url", Validation("INVALID_URL", "bad").WithField("url").Field)
}
