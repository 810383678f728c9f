package webhook

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// HeaderMask stands for a custom header's value wherever an endpoint is
// shown: values (often credentials, such as Authorization: Bearer …) are
// sealed at rest like the signing secret and never shown after they are
// set. Sending HeaderMask back as a header's value on update keeps the
// value that header has.
const HeaderMask = "********"

// maskHeaders returns the header names with HeaderMask for every value.
func maskHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for name := range h {
		out[name] = HeaderMask
	}
	return out
}

// sealHeaders seals every value of h for endpoint id (its id as associated
// data, as for the signing secret). A value equal to HeaderMask keeps the
// sealed value the header has in current (names compared without regard to
// case), if it has one.
func (s *Service) sealHeaders(id uuid.UUID, h, current map[string]string) (map[string]string, error) {
	if len(h) == 0 {
		return h, nil
	}
	if s.seal == nil {
		return nil, fmt.Errorf("seal headers: no seal function")
	}
	out := make(map[string]string, len(h))
	for name, value := range h {
		if value == HeaderMask {
			if old, ok := lookupFold(current, name); ok {
				out[name] = old
				continue
			}
		}
		sealed, err := s.seal([]byte(value), id[:])
		if err != nil {
			return nil, fmt.Errorf("seal header %s: %w", name, err)
		}
		out[name] = domain.SealedText(sealed)
	}
	return out, nil
}

func lookupFold(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}
