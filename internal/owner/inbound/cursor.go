package inbound

import "github.com/standmeet/standmeet/internal/domain/op"

// Cursor is the sort key of the last row of a page: a time and the row id
// that breaks ties. Clients see it as an opaque string.
type Cursor = op.KeysetCursor

// ParseCursor decodes a cursor string; empty means the first page.
func ParseCursor(s string) (*Cursor, error) { return op.ParseKeysetCursor(s) }
