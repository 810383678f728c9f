package op

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

type echoIn struct {
	ID   string `json:"id" path:"id"`
	Word string `json:"word"`
}

type echoOut struct {
	Said string `json:"said"`
}

func TestOpIsCallableThroughItsDescriptor(t *testing.T) {
	t.Parallel()
	owner := uuid.New()
	var d Descriptor = New(Meta{Name: "things.echo"},
		func(_ context.Context, c Caller, in echoIn) (echoOut, error) {
			if c.OwnerID != owner {
				return echoOut{}, errors.New("wrong caller")
			}
			return echoOut{Said: in.ID + ":" + in.Word}, nil
		})
	in := d.NewInput().(*echoIn)
	in.ID, in.Word = "7", "hi"
	out, err := d.Call(context.Background(), Caller{OwnerID: owner}, in)
	require.NoError(t, err)
	require.Equal(t, echoOut{Said: "7:hi"}, out)
	require.Equal(t, reflect.TypeFor[echoIn](), d.InputType())
	require.Equal(t, reflect.TypeFor[echoOut](), d.OutputType())
	require.Equal(t, "things", d.Meta().Group())
	_, found := Set{d}.Find("things.echo")
	require.True(t, found)
}

func TestCallRefusesAnInputOfTheWrongType(t *testing.T) {
	t.Parallel()
	ran := false
	d := New(Meta{Name: "things.echo"}, func(_ context.Context, _ Caller, in echoIn) (echoOut, error) {
		ran = true
		return echoOut{Said: in.Word}, nil
	})
	for _, in := range []any{nil, echoIn{Word: "value, not pointer"}, &echoOut{}, "x", (*echoIn)(nil)} {
		out, err := d.Call(context.Background(), Caller{}, in)
		require.ErrorIs(t, err, ErrInputType, "%T", in)
		require.ErrorContains(t, err, "things.echo takes *op.echoIn")
		require.Nil(t, out)
		require.Nil(t, domain.AsError(err), "a plain error: the surfaces answer it as internal")
	}
	require.False(t, ran, "the handler never runs on a wrong input")
}

func TestNewPage(t *testing.T) {
	t.Parallel()
	rows := []int{1, 2, 3}
	p := NewPage(rows, 2, strconv.Itoa)
	require.Equal(t, []int{1, 2}, p.Data)
	require.NotNil(t, p.NextCursor)
	require.Equal(t, "2", *p.NextCursor)
	p = NewPage(rows, 3, strconv.Itoa)
	require.Nil(t, p.NextCursor)
	empty := NewPage[int](nil, 5, strconv.Itoa)
	require.NotNil(t, empty.Data)
	require.Equal(t, 50, PageInput{}.NormalizedLimit())
	require.Equal(t, 200, PageInput{Limit: 1000}.NormalizedLimit())
	require.Equal(t, 7, PageInput{Limit: 7}.NormalizedLimit())
}
