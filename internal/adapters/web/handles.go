package web

import (
	"errors"
	"fmt"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// handles resolves one page section's typed op handles, keeping every
// failure, so start-up names each missing or retyped op at once.
type handles struct {
	ops  op.Set
	errs []error
}

// bind sets *h to the handle of the op named name, or records why it
// cannot.
func bind[In, Out any](hs *handles, h *op.Handle[In, Out], name string) {
	got, err := op.HandleOf[In, Out](hs.ops, name)
	if err != nil {
		hs.errs = append(hs.errs, err)
		return
	}
	*h = got
}

// bindOptional sets *h to the handle of the op named name, nil when the set
// does not declare it; an op of other types is recorded as a failure.
func bindOptional[In, Out any](hs *handles, h **op.Handle[In, Out], name string) {
	if _, ok := hs.ops.Find(name); !ok {
		*h = nil
		return
	}
	*h = new(op.Handle[In, Out])
	bind(hs, *h, name)
}

// err is nil when every handle resolved; otherwise it names the section
// (need) and every failure.
func (hs *handles) err(need string) error {
	if err := errors.Join(hs.errs...); err != nil {
		return fmt.Errorf("web: %s: %w", need, err)
	}
	return nil
}
