package op

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// KeysetCursor is the position after the last row of a page in a listing
// ordered by a time and then the row id (which breaks ties). Clients see it
// only as the opaque string String returns. Microseconds are kept exactly, as
// PostgreSQL stores them.
type KeysetCursor struct {
	At time.Time
	ID uuid.UUID
}

// String encodes the cursor for next_cursor.
func (c KeysetCursor) String() string {
	raw := strconv.FormatInt(c.At.UnixMicro(), 10) + "," + c.ID.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ErrInvalidCursor is returned for a cursor no listing handed out.
var ErrInvalidCursor = domain.Validation("INVALID_CURSOR", "cursor is not one this list handed out").WithField("cursor")

// ParseKeysetCursor decodes a cursor from String; the empty string is the
// first page (nil, nil).
func ParseKeysetCursor(s string) (*KeysetCursor, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrInvalidCursor
	}
	at, id, ok := strings.Cut(string(raw), ",")
	if !ok {
		return nil, ErrInvalidCursor
	}
	micros, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return nil, ErrInvalidCursor
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, ErrInvalidCursor
	}
	return &KeysetCursor{At: time.UnixMicro(micros).UTC(), ID: u}, nil
}
