package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/standmeet/standmeet/internal/domain"
)

// call runs the op named name for the session's caller. args is encoded as
// the JSON a REST body or MCP arguments would carry (fields bound from the
// path included, under their json names) and decoded into the op's input the
// way those surfaces decode it, unknown fields refused; the op's result is
// read back into out (may be nil) through its JSON. Going through JSON keeps
// the UI to the contract's shapes and away from the domains' Go types.
func (h *Handler) call(ctx context.Context, s *Session, name string, args any, out any) error {
	d, ok := h.ops.Find(name)
	if !ok {
		return notDeclared(name)
	}
	in := d.NewInput()
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return fmt.Errorf("web: encode arguments of %s: %w", name, err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(in); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return domain.Validation("INVALID_INPUT", fmt.Sprintf("%s has the wrong form", ute.Field)).WithField(ute.Field)
			}
			// The UI builds these arguments itself: a field the op does
			// not know is a mismatch between the UI and the op.
			return fmt.Errorf("web: arguments of %s: %w", name, err)
		}
	}
	res, err := d.Call(ctx, s.Caller, in)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("web: encode result of %s: %w", name, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("web: read result of %s: %w", name, err)
	}
	return nil
}
