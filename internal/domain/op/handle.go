package op

import (
	"context"
	"fmt"
	"reflect"
)

// Handle calls one op of a set with its own Go types, for a surface that
// calls ops from code (the admin UI) rather than from decoded requests. It
// is obtained once, at start-up, from the set (HandleOf), so a missing op or
// one whose types changed stops the start, not a request.
type Handle[In, Out any] struct {
	d Descriptor
}

// HandleOf returns the handle of the op named name in s. It fails, naming
// the op, when s declares no such op or the op's input or output type is
// not In or Out.
func HandleOf[In, Out any](s Set, name string) (Handle[In, Out], error) {
	d, ok := s.Find(name)
	if !ok {
		return Handle[In, Out]{}, fmt.Errorf("op: %s is not declared", name)
	}
	if in, out := reflect.TypeFor[In](), reflect.TypeFor[Out](); d.InputType() != in || d.OutputType() != out {
		return Handle[In, Out]{}, fmt.Errorf("op: %s takes %v and returns %v, not %v and %v", name, d.InputType(), d.OutputType(), in, out)
	}
	return Handle[In, Out]{d: d}, nil
}

// Name is the op's name.
func (h Handle[In, Out]) Name() string { return h.d.Meta().Name }

// Call runs the op for caller with in, through the same input gate (Check)
// as every other surface.
func (h Handle[In, Out]) Call(ctx context.Context, caller Caller, in In) (Out, error) {
	var zero Out
	if h.d == nil {
		return zero, fmt.Errorf("%w: the zero Handle names no op", ErrInputType)
	}
	res, err := h.d.Call(ctx, caller, &in)
	if err != nil {
		return zero, err
	}
	out, ok := res.(Out)
	if !ok {
		return zero, fmt.Errorf("op: %s returned %T, not %v", h.Name(), res, reflect.TypeFor[Out]())
	}
	return out, nil
}
