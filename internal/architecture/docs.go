package architecture

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// DocLimit bounds the documents whose paths match Glob (fs.Glob syntax, from
// the repository's root) to MaxLines lines each; MaxLines 0 sets no size.
type DocLimit struct {
	Glob     string
	MaxLines int
}

// DocLimits are the documents a newcomer reads, with the size each may have:
// the README in one sitting, a design page in ten minutes. The changelog has
// no size but is read for hours like the rest.
var DocLimits = []DocLimit{
	{Glob: "README.md", MaxLines: 350},
	{Glob: "docs/design/*.md", MaxLines: 400},
	{Glob: "CHANGELOG.md"},
}

// runHour matches a clock time to the minute that names one run: "23:39Z",
// "08:45 UTC", "2026-12-04T23:39". Timestamps to the second
// ("2026-12-08T09:30:00Z") are wire-format examples and pass. Documents state
// the current design and the latest figures; which run gave a figure at what
// hour belongs to the commit.
var runHour = regexp.MustCompile(`(?:^|[^:\d])(\d{1,2}:\d{2}\s?(?:Z|UTC)\b|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?:[^:\d]|$))`)

// CheckDocs reads the documents of root that DocLimits names and returns one
// line per violation, sorted: a document longer than its limit, or a line
// citing a run by its hour. A glob that matches nothing is not a violation.
func CheckDocs(root fs.FS) ([]string, error) {
	var bad []string
	for _, l := range DocLimits {
		names, err := fs.Glob(root, l.Glob)
		if err != nil {
			return nil, fmt.Errorf("glob %s: %w", l.Glob, err)
		}
		for _, name := range names {
			v, err := checkDoc(root, name, l.MaxLines)
			if err != nil {
				return nil, err
			}
			bad = append(bad, v...)
		}
	}
	sort.Strings(bad)
	return bad, nil
}

func checkDoc(root fs.FS, name string, maxLines int) ([]string, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	var bad []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for s.Scan() {
		n++
		if m := runHour.FindStringSubmatch(s.Text()); m != nil {
			bad = append(bad, fmt.Sprintf("%s:%d cites a run by its hour (%q): the figure's run belongs to its commit message", name, n, strings.TrimSpace(m[1])))
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if maxLines > 0 && n > maxLines {
		bad = append(bad, fmt.Sprintf("%s has %d lines, more than the %d a reader takes in (%s)", name, n, maxLines, path.Base(name)))
	}
	return bad, nil
}
