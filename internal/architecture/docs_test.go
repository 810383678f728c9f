package architecture_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/architecture"
)

// TestDocsStayWithinTheirSizes holds the repository's README and design
// pages to their sizes and keeps run hours out of them.
func TestDocsStayWithinTheirSizes(t *testing.T) {
	t.Parallel()
	bad, err := architecture.CheckDocs(os.DirFS("../.."))
	require.NoError(t, err)
	require.Empty(t, bad, "shorten the documents or move the history to commit messages")
}

func TestDocsCheckCatchesOversizeAndRunHours(t *testing.T) {
	t.Parallel()
	lines := func(n int, line string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(strings.Repeat(line+"\n", n))}
	}
	cases := []struct {
		name string
		fsys fstest.MapFS
		want []string
	}{
		{"within", fstest.MapFS{"README.md": lines(350, "ok"), "docs/design/a.md": lines(400, "ok")}, nil},
		{"readme too long", fstest.MapFS{"README.md": lines(351, "ok")}, []string{"README.md has 351 lines"}},
		{"design page too long", fstest.MapFS{"docs/design/a.md": lines(401, "ok")}, []string{"docs/design/a.md has 401 lines"}},
		{"run hour", fstest.MapFS{"docs/design/a.md": lines(1, "the full run of 23:39Z gave 0.2x")}, []string{`docs/design/a.md:1 cites a run by its hour ("23:39Z")`}},
		{"timestamp", fstest.MapFS{"CHANGELOG.md": lines(1, "measured 2026-12-04T08:45")}, []string{"CHANGELOG.md:1 cites a run by its hour"}},
		{"hour in UTC", fstest.MapFS{"README.md": lines(1, "at 08:45 UTC")}, []string{"README.md:1 cites a run by its hour"}},
		{"wire timestamp passes", fstest.MapFS{"README.md": lines(1, `"starts_at":"2026-12-08T09:30:00Z"`)}, nil},
		{"dates alone pass", fstest.MapFS{"CHANGELOG.md": lines(1, "## [0.3.0] - 2026-12-04")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bad, err := architecture.CheckDocs(c.fsys)
			require.NoError(t, err)
			require.Len(t, bad, len(c.want))
			for i, w := range c.want {
				require.Contains(t, bad[i], w)
			}
		})
	}
}
