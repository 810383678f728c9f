package vault

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// Limits bound what a zip may expand to, whatever its headers claim.
type Limits struct {
	// MaxFiles is the most markdown files read (default corpus.MaxImportNotes).
	MaxFiles int
	// MaxFileBytes caps one file (default corpus.MaxBodyLen plus room for
	// front matter).
	MaxFileBytes int64
	// MaxTotalBytes caps all files together (default 64 MiB).
	MaxTotalBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = corpus.MaxImportNotes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = corpus.MaxBodyLen + 64<<10
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 64 << 20
	}
	return l
}

// ParseZip reads a zip of markdown files into import items:
//
//   - every *.md (or *.markdown) file is a note; files and folders whose
//     name starts with "." (such as .obsidian/) and __MACOSX/ are skipped, and
//     so is every other file;
//   - a note's Ref is its path without the extension; "dir/index.md" is the
//     note of the folder "dir" (its Ref is "dir"), and so is "dir.md" beside
//     the folder; having both is an error;
//   - a note's parent is the note of its folder; a folder without a note of
//     its own gets a placeholder (title = folder name, empty, unpublished, of
//     defaultGenre);
//   - front matter sets title (default: the file or folder name), slug,
//     tags, published, genre (default: defaultGenre), lang, aliases, excerpt
//     (or description), cssclasses, show_as_source and archived.
//
// Errors are domain errors naming the file at fault.
func ParseZip(data []byte, defaultGenre corpus.Genre, limits Limits) ([]corpus.ImportItem, error) {
	limits = limits.withDefaults()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, domain.Validation("INVALID_ZIP", "the body is not a readable zip archive")
	}
	items := map[string]corpus.ImportItem{}
	var total int64
	files := 0
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, "\\", "/")
		clean := path.Clean(strings.TrimPrefix(name, "/"))
		if strings.HasPrefix(clean, "../") || clean == ".." || path.IsAbs(name) {
			return nil, fileError("INVALID_PATH", name, "the path leaves the vault")
		}
		if f.FileInfo().IsDir() || skipped(clean) || !isMarkdown(clean) {
			continue
		}
		files++
		if files > limits.MaxFiles {
			return nil, domain.TooLarge("IMPORT_TOO_LARGE", fmt.Sprintf("the vault holds more than %d markdown files", limits.MaxFiles))
		}
		src, err := readCapped(f, limits.MaxFileBytes)
		if err != nil {
			return nil, fileError("FILE_TOO_LARGE", name, err.Error())
		}
		total += int64(len(src))
		if total > limits.MaxTotalBytes {
			return nil, domain.TooLarge("IMPORT_TOO_LARGE", fmt.Sprintf("the vault's markdown files expand to more than %d bytes", limits.MaxTotalBytes))
		}
		ref, title := refOf(clean)
		it, err := itemOf(string(src), ref, title, defaultGenre)
		if err != nil {
			return nil, fileError("INVALID_FRONT_MATTER", name, err.Error())
		}
		if _, dup := items[ref]; dup {
			return nil, fileError("DUPLICATE_PATH", name, fmt.Sprintf("two files are the note of %q (dir.md and dir/index.md?)", ref))
		}
		items[ref] = it
	}
	if len(items) == 0 {
		return nil, domain.Validation("EMPTY_IMPORT", "the zip holds no markdown files")
	}
	// Placeholders for folders without a note, then parents.
	refs := make([]string, 0, len(items))
	for ref := range items {
		refs = append(refs, ref)
	}
	for _, ref := range refs {
		for dir := path.Dir(ref); dir != "."; dir = path.Dir(dir) {
			if _, ok := items[dir]; ok {
				break
			}
			items[dir] = corpus.ImportItem{Ref: dir, Fields: corpus.Fields{Genre: defaultGenre, Title: path.Base(dir)}}
		}
	}
	out := make([]corpus.ImportItem, 0, len(items))
	for ref, it := range items {
		if dir := path.Dir(ref); dir != "." {
			it.ParentRef = dir
		}
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

func fileError(code, name, msg string) error {
	return domain.Unprocessable(code, name+": "+msg).WithField(name)
}

func skipped(name string) bool {
	for _, seg := range strings.Split(name, "/") {
		if strings.HasPrefix(seg, ".") || seg == "__MACOSX" {
			return true
		}
	}
	return false
}

func isMarkdown(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// refOf returns a file's ref and its default title.
func refOf(clean string) (ref, title string) {
	ref = strings.TrimSuffix(clean, path.Ext(clean))
	base := path.Base(ref)
	if strings.EqualFold(base, "index") && path.Dir(ref) != "." {
		ref = path.Dir(ref)
		base = path.Base(ref)
	}
	return ref, base
}

var errTooLarge = errors.New("the file is over the size limit")

func readCapped(f *zip.File, max int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(max) {
		return nil, errTooLarge
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer rc.Close()
	// The header may lie: never read more than max+1 bytes.
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if int64(len(b)) > max {
		return nil, errTooLarge
	}
	return b, nil
}

// itemOf builds an import item from one file's text.
func itemOf(src, ref, title string, defaultGenre corpus.Genre) (corpus.ImportItem, error) {
	fm, body, err := SplitFrontMatter(src)
	if err != nil {
		return corpus.ImportItem{}, err
	}
	it := corpus.ImportItem{Ref: ref, Fields: corpus.Fields{
		Genre:      defaultGenre,
		Title:      title,
		Body:       strings.TrimLeft(body, "\r\n"),
		Slug:       fm.String("slug"),
		Lang:       fm.String("lang"),
		Excerpt:    fm.String("excerpt"),
		Aliases:    fm.Strings("aliases", "alias"),
		CSSClasses: fm.Strings("cssclasses", "cssclass", "css_classes"),
	}}
	if t := fm.String("title"); t != "" {
		it.Title = t
	}
	if g := fm.String("genre"); g != "" {
		it.Genre = corpus.Genre(g)
	}
	if it.Excerpt == "" {
		it.Excerpt = fm.String("description")
	}
	for _, tag := range fm.Strings("tags", "tag") {
		if tag = strings.TrimPrefix(tag, "#"); tag != "" {
			it.Tags = append(it.Tags, tag)
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"published", &it.Published}, {"show_as_source", &it.ShowAsSource}, {"archived", &it.Archived}} {
		v, err := fm.Bool(b.key)
		if err != nil {
			return corpus.ImportItem{}, err
		}
		*b.dst = v
	}
	return it, nil
}
