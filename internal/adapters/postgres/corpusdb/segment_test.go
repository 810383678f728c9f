package corpusdb_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/testdb"
)

// sqlSegments runs every input through corpus_path_segment in one query.
func sqlSegments(t testing.TB, pool *pgxpool.Pool, inputs []string) []string {
	t.Helper()
	var out []string
	err := pool.QueryRow(context.Background(),
		`SELECT coalesce(array_agg(corpus_path_segment(x) ORDER BY i), '{}') FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i)`,
		inputs).Scan(&out)
	require.NoError(t, err)
	require.Len(t, out, len(inputs))
	return out
}

// requireAgree compares Go and SQL on inputs and reports the first
// disagreements with their code points.
func requireAgree(t *testing.T, pool *pgxpool.Pool, what string, inputs []string) {
	t.Helper()
	got := sqlSegments(t, pool, inputs)
	var bad []string
	for i, in := range inputs {
		if want := corpus.PathSegment(in); got[i] != want {
			bad = append(bad, strconv.QuoteToASCII(in)+": go "+strconv.QuoteToASCII(want)+" sql "+strconv.QuoteToASCII(got[i]))
			if len(bad) == 20 {
				break
			}
		}
	}
	require.Empty(t, bad, "%s: Go and SQL segments differ on %d+ of %d inputs", what, len(bad), len(inputs))
}

// storable reports whether PostgreSQL text can hold s (valid UTF-8, no NUL);
// the domain refuses anything else before it reaches the store.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// generatedTitles returns n titles from a seeded generator mixing case,
// spaces, punctuation, scripts inside and outside the kept blocks, combining
// marks, astral characters and lengths past the cut.
func generatedTitles(n int) []string {
	rng := rand.New(rand.NewPCG(2026, 5))
	pools := [][]rune{
		[]rune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
		[]rune(" \t\n-_.,;:!?/\\|@#$%^&*()[]{}<>\"'`~+=—–…·•"),
		[]rune("ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿĲĳŸẞİıǄǅǆȺȾɃ"),
		[]rune("ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩαβγδεζηθικλμνξοπρσςτυφχψωΆΈΉΊΌΎΏϴϓ"),
		[]rune("АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюяЀѐԮԯ"),
		[]rune("東京大阪日本語中文漢字ひらがなカタカナー・한국어노트עברית العربية हिन्दी ไทย ქართული"),
		[]rune("\u0300\u0301\u0302\u0308\u0327\u05b0\u064b\u093f\u0e31"),
		[]rune("ＡＢＣ１２３ﬁℌⅫ½²K℃™©®€£¥"),
		[]rune("😀🎉👍🏽🇩🇪𝔘𝔫𝔦𝔠𝔬𝔡𝔢𠀀𠀁"),
	}
	out := make([]string, 0, n+1)
	out = append(out, "")
	for len(out) <= n {
		length := rng.IntN(40)
		if rng.IntN(10) == 0 {
			length = 60 + rng.IntN(120) // past MaxSegmentLen
		}
		var b strings.Builder
		for range length {
			if rng.IntN(20) == 0 { // any BMP or astral code point
				r := rune(rng.IntN(0x10FFFF) + 1)
				if utf8.ValidRune(r) {
					b.WriteRune(r)
				}
				continue
			}
			p := pools[rng.IntN(len(pools))]
			b.WriteRune(p[rng.IntN(len(p))])
		}
		out = append(out, b.String())
	}
	return out
}

// fuzzSeeds reads the domain's FuzzPathSegment seed corpus (go test fuzz v1
// files holding one string each).
func fuzzSeeds(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "corpus", "testdata", "fuzz", "FuzzPathSegment")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the domain's seed corpus is missing")
	var out []string
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		require.Len(t, lines, 2, e.Name())
		lit, ok := strings.CutPrefix(lines[1], "string(")
		require.True(t, ok, e.Name())
		s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		require.NoError(t, err, e.Name())
		out = append(out, s)
	}
	return out
}

// TestSQLPathSegmentMatchesGo proves corpus_path_segment (the trigger's
// segment rule) equals corpus.PathSegment: on every code point of the Basic
// Multilingual Plane alone and between letters, on a sample of the astral
// planes, on thousands of generated titles, and on the fuzz seed corpus.
func TestSQLPathSegmentMatchesGo(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)

	var alone, between []string
	for r := rune(1); r <= 0xFFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates are not text
		}
		alone = append(alone, string(r))
		between = append(between, "Ab"+string(r)+"Cd"+string(r)+string(r)+"e")
	}
	requireAgree(t, pool, "every BMP code point", alone)
	requireAgree(t, pool, "every BMP code point between letters", between)

	var astral []string
	for r := rune(0x10000); r <= utf8.MaxRune; r += 61 {
		astral = append(astral, "x"+string(r)+"Y")
	}
	requireAgree(t, pool, "astral sample", astral)

	titles := generatedTitles(5000)
	require.Len(t, titles, 5001)
	requireAgree(t, pool, "generated titles", titles)

	requireAgree(t, pool, "fuzz seed corpus", fuzzSeeds(t))
}

// TestSQLNoteSegmentAndURIMatchGo checks the note-level functions built on
// the segment: the slug → title → id fallback, and the URI of a chain.
func TestSQLNoteSegmentAndURIMatchGo(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	id := uuid.New()
	for _, c := range []struct{ slug, title string }{{"", "Title"}, {"My Slug", "Title"}, {"!!!", "Title"}, {"", "¿?"}, {"", ""}} {
		var got string
		require.NoError(t, pool.QueryRow(ctx, `SELECT corpus_note_segment($1, $2, $3)`, id, c.slug, c.title).Scan(&got))
		require.Equal(t, corpus.NoteSegment(id, c.slug, c.title), got, "%+v", c)
	}
	owner := newOwner(t, pool)
	a, b := uuid.New(), uuid.New()
	_, err := pool.Exec(ctx, `INSERT INTO corpus_notes (id, owner_id, genre, title) VALUES ($1, $2, 'wiki', 'Software')`, a, owner)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO corpus_notes (id, owner_id, genre, title, slug, parent_id) VALUES ($1, $2, 'writing', 'x', 'Stand Meet', $3)`, b, owner, a)
	require.NoError(t, err)
	var uri string
	require.NoError(t, pool.QueryRow(ctx, `SELECT corpus_note_uri($1)`, b).Scan(&uri))
	require.Equal(t, corpus.URI(corpus.GenreWriting, []string{"software", "stand-meet"}), uri)
}

// FuzzSQLPathSegment compares Go and SQL on fuzzed input. Its seeds are the
// domain's FuzzPathSegment corpus, so `go test` runs all of it through SQL.
func FuzzSQLPathSegment(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	pool := testdb.New(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !storable(s) {
			t.Skip("PostgreSQL text cannot hold it; the domain refuses it")
		}
		got := sqlSegments(t, pool, []string{s})[0]
		if want := corpus.PathSegment(s); got != want {
			t.Fatalf("%q: go %q, sql %q", s, want, got)
		}
	})
}
