package corpus

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestPathSegment(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
	}{
		{"Architecture", "architecture"},
		{"Project StandMeet", "project-standmeet"},
		{"  spaced   out  ", "spaced-out"},
		{"Hello, World!", "hello-world"},
		{"a--b__c..d", "a-b-c-d"},
		{"already-a-segment", "already-a-segment"},
		{"C++ & Go: 2024/25", "c-go-2024-25"},
		{"Über Straße", "über-straße"},
		{"ÀÉÎÕÜ Ÿ", "àéîõü-ÿ"},
		{"İstanbul", "istanbul"},
		{"ΣΟΦΙΑ σοφία", "σοφια-σοφία"},
		{"Москва", "москва"},
		{"東京 タワー", "東京-タワー"},
		{"한국어 노트", "한국어-노트"},
		{"עברית", "עברית"},
		{"cafe\u0301 (de\u0301compose\u0301)", "cafe\u0301-de\u0301compose\u0301"}, // combining acute kept
		{"caf\u00e9", "caf\u00e9"},
		{"emoji 🎉 party", "emoji-party"},
		{"Kelvin \u212A sign", "kelvin-sign"}, // KELVIN SIGN is outside the kept blocks
		{"full-width ＡＢＣ", "full-width"},
		{"", ""},
		{"!!!", ""},
		{"   ", ""},
		{"-x-", "x"},
		{"TAB\tand\nnewline", "tab-and-newline"},
		{"\xff\xfeinvalid", "invalid"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, PathSegment(c.in), "PathSegment(%q)", c.in)
	}
}

func TestPathSegmentCutsAtMaxSegmentLen(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab ", 40) // "ab-ab-…": a '-' falls at position 80
	got := PathSegment(long)
	require.LessOrEqual(t, utf8.RuneCountInString(got), MaxSegmentLen)
	require.False(t, strings.HasSuffix(got, "-"))
	require.Equal(t, strings.Repeat("ab-", 26)+"ab", got)
	require.Equal(t, strings.Repeat("日", MaxSegmentLen), PathSegment(strings.Repeat("日", 200)))
}

func TestNoteSegmentFallsBackFromSlugToTitleToID(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("0190f0b6-1111-7000-8000-000000000001")
	require.Equal(t, "my-slug", NoteSegment(id, "My Slug", "Title"))
	require.Equal(t, "title", NoteSegment(id, "", "Title"))
	require.Equal(t, "title", NoteSegment(id, "!!!", "Title"))
	require.Equal(t, id.String(), NoteSegment(id, "", "¿?"))
	require.Equal(t, id.String(), PathSegment(id.String()), "an id is itself a segment")
}

func TestURI(t *testing.T) {
	t.Parallel()
	require.Equal(t, "wiki://software/project/standmeet/architecture",
		URI(GenreWiki, []string{"software", "project", "standmeet", "architecture"}))
	require.Equal(t, "raw://inbox", URI(GenreRaw, []string{"inbox"}))
}

// segmentProperties are what every segment satisfies, whatever the input.
func segmentProperties(t *testing.T, in string) {
	got := PathSegment(in)
	if PathSegment(got) != got {
		t.Fatalf("not idempotent: %q → %q → %q", in, got, PathSegment(got))
	}
	if strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
		t.Fatalf("bad separators in %q (from %q)", got, in)
	}
	if utf8.RuneCountInString(got) > MaxSegmentLen {
		t.Fatalf("%q is longer than %d", got, MaxSegmentLen)
	}
	for _, r := range got {
		if r != '-' && (!keepSegmentRune(r) || lowerSegmentRune(r) != r) {
			t.Fatalf("%q holds %U, which the rule drops or lowers", got, r)
		}
		if r == '/' {
			t.Fatalf("%q holds a slash", got)
		}
	}
}

// FuzzPathSegment checks the segment's invariants. Its seed corpus
// (testdata/fuzz/FuzzPathSegment) is also run through the SQL function by
// the postgres adapter's FuzzSQLPathSegment, so every input that ever found
// a bug here is checked against SQL too.
func FuzzPathSegment(f *testing.F) {
	for _, s := range []string{"Architecture", "Über Straße", "İ", "ẞ", "東京", "a\u0301", "🎉", "", "--", strings.Repeat("x ", 60)} {
		f.Add(s)
	}
	f.Fuzz(segmentProperties)
}

// TestSegmentTablesAreConsistent checks the generated tables against
// themselves over every code point: lowering is idempotent and lands on a
// kept rune, so the rule's output is stable.
func TestSegmentTablesAreConsistent(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= utf8.MaxRune; r++ {
		l := lowerSegmentRune(r)
		if l != r {
			require.True(t, keepSegmentRune(l), "%U lowers to %U, which is not kept", r, l)
			require.Equal(t, l, lowerSegmentRune(l), "%U lowers twice", r)
		}
	}
	require.False(t, keepSegmentRune('-'))
	require.False(t, keepSegmentRune('/'))
}
