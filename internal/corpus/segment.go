package corpus

import (
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxSegmentLen is the most characters a path segment keeps; longer titles
// are cut (and a separator left at the cut is trimmed).
const MaxSegmentLen = 80

// PathSegment turns text (a title or a slug) into one segment of a note URI.
// It is the one definition of a segment; the SQL function corpus_path_segment
// computes exactly the same (TestSQLPathSegmentMatchesGo):
//
//  1. lower-case each character by a fixed table of simple case pairs;
//  2. keep the letters, digits and combining marks of a fixed list of Unicode
//     blocks (Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic, Devanagari,
//     Thai, Georgian, kana, CJK ideographs, Hangul — see
//     gen_segment_table.go); every run of other characters (spaces,
//     punctuation, symbols, emoji, unlisted scripts) becomes one '-';
//  3. trim '-' from both ends, keep at most MaxSegmentLen characters, and
//     trim a '-' left at the cut.
//
// The tables are explicit rather than Go's unicode package or PostgreSQL's
// regex classes because those two come from different Unicode versions (and
// PostgreSQL's lower() from the database locale), so they disagree on exotic
// characters. No Unicode normalisation is applied: a decomposed accent is a
// kept combining mark, so "é" typed either way stays in the segment, though
// the two spellings give different segments.
//
// The result may be empty (a title of only punctuation); NoteSegment decides
// what a note uses then.
func PathSegment(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	n := 0
	for _, r := range s {
		r = lowerSegmentRune(r)
		if !keepSegmentRune(r) {
			sep = n > 0
			continue
		}
		if sep {
			if n == MaxSegmentLen {
				break
			}
			b.WriteByte('-')
			n++
			sep = false
		}
		if n == MaxSegmentLen {
			break
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimRight(b.String(), "-")
}

// NoteSegment returns a note's own segment: its slug's segment, else its
// title's, else — when both leave nothing, as with an empty or all-punctuation
// title — the note's id, which is unique among its siblings and is itself a
// valid segment. SQL: corpus_note_segment(id, slug, title).
func NoteSegment(id uuid.UUID, slug, title string) string {
	if s := PathSegment(slug); s != "" {
		return s
	}
	if s := PathSegment(title); s != "" {
		return s
	}
	return id.String()
}

// URI builds "<genre>://<path>" from the segments of a note's ancestors,
// root first, followed by its own. SQL: corpus_note_uri(id).
func URI(genre Genre, segments []string) string {
	return string(genre) + "://" + strings.Join(segments, "/")
}

// validSegmentText reports whether s can go through PathSegment and the
// database unchanged: valid UTF-8 without NUL, which PostgreSQL text refuses.
func validSegmentText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
