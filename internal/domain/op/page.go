package op

// Paging defaults of the contract.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// PageInput is embedded in the input of a paged op.
type PageInput struct {
	Limit  int    `json:"limit,omitempty" query:"limit" range:"1,200" doc:"page size, default 50, at most 200"`
	Cursor string `json:"cursor,omitempty" query:"cursor" doc:"opaque cursor from next_cursor"`
}

// NormalizedLimit returns Limit, or DefaultLimit when it is unset. The input
// gate (Check) has refused a Limit outside 1…MaxLimit before a handler runs;
// the clamp stays for callers that build a PageInput themselves.
func (p PageInput) NormalizedLimit() int {
	switch {
	case p.Limit <= 0:
		return DefaultLimit
	case p.Limit > MaxLimit:
		return MaxLimit
	default:
		return p.Limit
	}
}

// Page is a page of a collection: {"data":[…],"next_cursor":"…"|null}.
type Page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
}

// List is a whole collection: {"data":[…]}.
type List[T any] struct {
	Data []T `json:"data"`
}

// NewPage builds a page from rows fetched with limit+1: when there is one row
// more than limit, it is dropped and cursorOf(last kept row) becomes the next
// cursor. Data is never nil, so it encodes as [].
func NewPage[T any](rows []T, limit int, cursorOf func(T) string) Page[T] {
	p := Page[T]{Data: rows}
	if len(rows) > limit {
		p.Data = rows[:limit]
		c := cursorOf(p.Data[limit-1])
		p.NextCursor = &c
	}
	if p.Data == nil {
		p.Data = []T{}
	}
	return p
}
