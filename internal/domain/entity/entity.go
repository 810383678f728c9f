// Package entity holds the single ACL predicate of the instance,
// AllowsCorpusEntry. Every reader of the corpus that is not the owner — an
// access code, an embed, a webhook endpoint attached to an embed — is
// admitted or refused by this one function, so the rules cannot drift apart.
package entity

import (
	"strings"

	"github.com/standmeet/standmeet/internal/domain"
)

// CorpusEntry is what the predicate needs to know about a note.
type CorpusEntry struct {
	// URI is the note's URI, "<genre>://<path>".
	URI string
	// Published says whether the note is in the published slice.
	Published bool
}

// RawScheme is the URI prefix of raw notes, which never leave the instance.
const RawScheme = "raw://"

// IsRaw reports whether uri names a raw note.
func IsRaw(uri string) bool {
	return strings.HasPrefix(strings.ToLower(uri), RawScheme)
}

// AllowsCorpusEntry reports whether a reader with the role's URI globs, minus
// the code's deny globs, may read entry. Where the role reads only the
// published slice, an unpublished entry is refused. A raw:// entry is never
// admitted, whatever the globs say.
func AllowsCorpusEntry(roleGlobs, denyGlobs []string, publishedOnly bool, entry CorpusEntry) bool {
	if entry.URI == "" || IsRaw(entry.URI) {
		return false
	}
	if publishedOnly && !entry.Published {
		return false
	}
	if !domain.MatchAnyGlob(roleGlobs, entry.URI) {
		return false
	}
	return !domain.MatchAnyGlob(denyGlobs, entry.URI)
}
