package vault

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

func TestSplitFrontMatter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      FrontMatter
		body      string
	}{
		{"none", "# Title\ntext", FrontMatter{}, "# Title\ntext"},
		{"scalars and lists", "---\ntitle: \"Quoted: yes\"\nslug: plain # comment\ntags: [go, 'pg', \"a, b\"]\naliases:\n  - one\n  - 'two'\npublished: true\n---\nbody\n",
			FrontMatter{"title": {Scalar: "Quoted: yes"}, "slug": {Scalar: "plain"}, "tags": {List: []string{"go", "pg", "a, b"}, IsList: true},
				"aliases": {List: []string{"one", "two"}, IsList: true}, "published": {Scalar: "true"}}, "body\n"},
		{"crlf and dots", "---\r\nTitle: It''s\r\n...\r\nbody", FrontMatter{"title": {Scalar: "It''s"}}, "body"},
		{"single quote escape", "---\ntitle: 'It''s'\n---\n", FrontMatter{"title": {Scalar: "It's"}}, ""},
		{"nested map skipped", "---\nmeta:\n  a: 1\n  b: 2\ntitle: T\n---\n", FrontMatter{"meta": {}, "title": {Scalar: "T"}}, ""},
		{"bom", "\ufeff---\ntitle: T\n---\nx", FrontMatter{"title": {Scalar: "T"}}, "x"},
		{"empty block", "---\n---\nx", FrontMatter{}, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fm, body, err := SplitFrontMatter(c.src)
			require.NoError(t, err)
			require.Equal(t, c.want, fm)
			require.Equal(t, c.body, body)
		})
	}
	for _, bad := range []string{"---\ntitle: x\n", "---\nnot a pair\n---\n", "---\ntitle: \"open\n---\n", "---\ntags: [a, b\n---\n", "---\ntags: ['a' 'b']\n---\n"} {
		_, _, err := SplitFrontMatter(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestFrontMatterAccessors(t *testing.T) {
	t.Parallel()
	fm, _, err := SplitFrontMatter("---\na: x, y\nb: x y\nc: [z]\nyes: yes\nno: off\nbad: maybe\n---\n")
	require.NoError(t, err)
	require.Equal(t, []string{"x", "y"}, fm.Strings("a"))
	require.Equal(t, []string{"x", "y"}, fm.Strings("b"))
	require.Equal(t, []string{"z"}, fm.Strings("missing", "c"))
	require.Nil(t, fm.Strings("missing"))
	v, err := fm.Bool("yes")
	require.NoError(t, err)
	require.True(t, v)
	v, err = fm.Bool("no")
	require.NoError(t, err)
	require.False(t, v)
	_, err = fm.Bool("bad")
	require.Error(t, err)
}

// FuzzSplitFrontMatter: any input either fails cleanly or yields a body that
// is the tail of the input.
func FuzzSplitFrontMatter(f *testing.F) {
	f.Add("---\ntitle: x\ntags: [a, 'b', \"c\"]\nl:\n - 1\n---\nbody")
	f.Add("---\r\n'a': b\r\n...\r\n")
	f.Add("no front matter")
	f.Add("---\ntitle: \"\\\"\n---\n")
	f.Fuzz(func(t *testing.T, src string) {
		fm, body, err := SplitFrontMatter(src)
		if err != nil {
			return
		}
		if !strings.HasSuffix(src, body) {
			t.Fatalf("body %q is not the tail of %q", body, src)
		}
		for k := range fm {
			if k != strings.ToLower(k) {
				t.Fatalf("key %q not lower-cased", k)
			}
		}
	})
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestParseZip(t *testing.T) {
	t.Parallel()
	data := zipOf(t, map[string]string{
		"software/index.md":                   "---\ntitle: Software\n---\nAll about software.",
		"software/project/standmeet.md":       "---\ntags: [go, '#pg']\npublished: yes\nslug: sm\n---\n\nThe server.",
		"software/project/standmeet/notes.md": "plain",
		"journal/2026.md":                     "---\ngenre: journal\nlang: en\n---\nDear diary",
		".obsidian/workspace.md":              "ignored",
		"__MACOSX/x.md":                       "ignored",
		"image.png":                           "ignored",
	})
	items, err := ParseZip(data, corpus.GenreWiki, Limits{})
	require.NoError(t, err)
	byRef := map[string]corpus.ImportItem{}
	for _, it := range items {
		byRef[it.Ref] = it
	}
	require.Len(t, byRef, 6)
	require.Equal(t, corpus.ImportItem{Ref: "software", Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "Software", Body: "All about software."}}, byRef["software"])
	sm := byRef["software/project/standmeet"]
	require.Equal(t, "software/project", sm.ParentRef)
	require.Equal(t, "standmeet", sm.Title)
	require.Equal(t, "sm", sm.Slug)
	require.Equal(t, []string{"go", "pg"}, sm.Tags)
	require.True(t, sm.Published)
	require.Equal(t, "The server.", sm.Body)
	require.Equal(t, "software/project/standmeet", byRef["software/project/standmeet/notes"].ParentRef)
	placeholder := byRef["software/project"]
	require.Equal(t, corpus.ImportItem{Ref: "software/project", ParentRef: "software", Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "project"}}, placeholder)
	require.Equal(t, corpus.GenreJournal, byRef["journal/2026"].Genre)
	require.Equal(t, "journal", byRef["journal/2026"].ParentRef)
	require.Equal(t, corpus.GenreWiki, byRef["journal"].Genre, "placeholders take the default genre")
}

func TestParseZipRefuses(t *testing.T) {
	t.Parallel()
	code := func(err error) string {
		de := domain.AsError(err)
		require.NotNil(t, de, "%v", err)
		return de.Code
	}
	_, err := ParseZip([]byte("not a zip"), corpus.GenreWiki, Limits{})
	require.Equal(t, "INVALID_ZIP", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"a.txt": "x"}), corpus.GenreWiki, Limits{})
	require.Equal(t, "EMPTY_IMPORT", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"a.md": "x", "a/index.md": "y"}), corpus.GenreWiki, Limits{})
	require.Equal(t, "DUPLICATE_PATH", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"../up.md": "x"}), corpus.GenreWiki, Limits{})
	require.Equal(t, "INVALID_PATH", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"a.md": "---\npublished: maybe\n---\n"}), corpus.GenreWiki, Limits{})
	require.Equal(t, "INVALID_FRONT_MATTER", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"a.md": strings.Repeat("x", 100)}), corpus.GenreWiki, Limits{MaxFileBytes: 50})
	require.Equal(t, "FILE_TOO_LARGE", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"a.md": "x", "b.md": "y", "c.md": "z"}), corpus.GenreWiki, Limits{MaxFiles: 2})
	require.Equal(t, "IMPORT_TOO_LARGE", code(err))
	_, err = ParseZip(zipOf(t, map[string]string{"a.md": strings.Repeat("x", 40), "b.md": strings.Repeat("y", 40)}), corpus.GenreWiki, Limits{MaxTotalBytes: 60})
	require.Equal(t, "IMPORT_TOO_LARGE", code(err))
}

// TestParseZipCapsALyingHeader: a zip whose header claims a small size but
// whose data expands further is cut at the cap, not read whole.
func TestParseZipCapsALyingHeader(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "bomb.md", Method: zip.Store, CompressedSize64: 100, UncompressedSize64: 10, CRC32: 0})
	require.NoError(t, err)
	_, err = w.Write(bytes.Repeat([]byte("x"), 100))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	_, err = ParseZip(buf.Bytes(), corpus.GenreWiki, Limits{MaxFileBytes: 50})
	de := domain.AsError(err)
	require.NotNil(t, de, "%v", err)
	require.Equal(t, "FILE_TOO_LARGE", de.Code)
}
