package inbound

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Cursor is the sort key of the last row of a page: a time and the row id
// that breaks ties. Clients see it as an opaque string.
type Cursor struct {
	At time.Time
	ID uuid.UUID
}

// String encodes the cursor.
func (c Cursor) String() string {
	raw := strconv.FormatInt(c.At.UnixMicro(), 10) + "," + c.ID.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// errBadCursor is the error for a cursor this package did not make.
var errBadCursor = domain.Validation("INVALID_CURSOR", "cursor is not one this server returned").WithField("cursor")

// ParseCursor decodes a cursor string; empty means the first page.
func ParseCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, errBadCursor
	}
	at, id, ok := strings.Cut(string(raw), ",")
	if !ok {
		return nil, errBadCursor
	}
	micros, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return nil, errBadCursor
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, errBadCursor
	}
	return &Cursor{At: time.UnixMicro(micros).UTC(), ID: u}, nil
}
