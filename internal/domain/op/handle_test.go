package op

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

func TestHandleCallsTheOpWithItsTypes(t *testing.T) {
	t.Parallel()
	owner := uuid.New()
	set := Set{New(Meta{Name: "things.echo"}, func(_ context.Context, c Caller, in echoIn) (echoOut, error) {
		return echoOut{Said: c.OwnerID.String() + ":" + in.Word}, nil
	})}
	h, err := HandleOf[echoIn, echoOut](set, "things.echo")
	require.NoError(t, err)
	require.Equal(t, "things.echo", h.Name())
	out, err := h.Call(context.Background(), Caller{OwnerID: owner}, echoIn{Word: "hi"})
	require.NoError(t, err)
	require.Equal(t, echoOut{Said: owner.String() + ":hi"}, out)

	// The input gate runs for a handle as for every surface.
	_, err = h.Call(context.Background(), Caller{}, echoIn{Word: "a\x00b"})
	require.ErrorIs(t, err, domain.Validation(CodeInvalidInput, ""))
}

func TestHandleOfFailsNamingTheOp(t *testing.T) {
	t.Parallel()
	set := Set{New(Meta{Name: "things.echo"}, func(context.Context, Caller, echoIn) (echoOut, error) { return echoOut{}, nil })}
	_, err := HandleOf[echoIn, echoOut](set, "things.missing")
	require.EqualError(t, err, "op: things.missing is not declared")
	_, err = HandleOf[echoOut, echoOut](set, "things.echo")
	require.ErrorContains(t, err, "op: things.echo takes op.echoIn and returns op.echoOut, not op.echoOut and op.echoOut")
	_, err = HandleOf[echoIn, Empty](set, "things.echo")
	require.ErrorContains(t, err, "things.echo takes")

	var zero Handle[echoIn, echoOut]
	_, err = zero.Call(context.Background(), Caller{}, echoIn{})
	require.ErrorIs(t, err, ErrInputType)
}
