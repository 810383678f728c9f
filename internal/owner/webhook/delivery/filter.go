package delivery

import (
	"sync"

	"github.com/standmeet/standmeet/internal/domain/filter"
)

// maxCachedFilters bounds the parsed filters a Fanouter keeps; past it the
// cache starts afresh (owners have tens of endpoints, so it rarely does).
const maxCachedFilters = 4096

// filters keeps parsed endpoint filters by their stored text, so a fan-out
// parses each filter once rather than once per event.
type filters struct {
	mu     sync.Mutex
	parsed map[string]*filter.Filter
}

// passes reports whether ev passes ep's filter (an endpoint without one
// passes everything). A stored filter that no longer parses passes
// nothing: an event the owner may have filtered out is never sent.
func (fs *filters) passes(ep Endpoint, ev *filter.Event) bool {
	if len(ep.Filter) == 0 {
		return true
	}
	key := string(ep.Filter)
	fs.mu.Lock()
	f, ok := fs.parsed[key]
	fs.mu.Unlock()
	if !ok {
		var err error
		if f, err = filter.Parse(ep.Filter); err != nil {
			return false
		}
		fs.mu.Lock()
		if fs.parsed == nil || len(fs.parsed) >= maxCachedFilters {
			fs.parsed = map[string]*filter.Filter{}
		}
		fs.parsed[key] = f
		fs.mu.Unlock()
	}
	return f.Match(ev)
}
