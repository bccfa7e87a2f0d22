package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vigia/vigia/storage"
)

// List returns one page of the keys below prefix in lexical order. It reads
// only the directories that can hold such keys, one at a time, and skips
// subtrees that sort before StartAfter or fold into a returned common prefix.
func (f *FS) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	if err := storage.ValidatePrefix(prefix); err != nil {
		return storage.ListPage{}, fmt.Errorf("fs list: %w", err)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = storage.DefaultListLimit
	}
	l := &lister{
		ctx:        ctx,
		root:       f.root,
		prefix:     prefix,
		startAfter: opts.StartAfter,
		delimiter:  opts.Delimiter,
		limit:      limit,
	}
	startDir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		startDir = prefix[:i]
	}
	if err := l.walk(startDir); err != nil && err != errPageFull {
		return storage.ListPage{}, fmt.Errorf("fs list %q: %w", prefix, err)
	}
	if l.more {
		l.page.Next = l.last
	}
	return l.page, nil
}

// lister gathers one page of a listing.
type lister struct {
	ctx        context.Context
	root       string
	prefix     string
	startAfter string
	delimiter  string
	limit      int

	page  storage.ListPage
	count int
	last  string
	more  bool
	// folded is the last common prefix returned; keys below it are skipped.
	folded string
}

// entry is a directory entry with the name it sorts by.
type entry struct {
	de   os.DirEntry
	sort string
}

// walk visits the keys below the directory of key dir ("" for the root).
func (l *lister) walk(dir string) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	des, err := os.ReadDir(filepath.Join(l.root, filepath.FromSlash(dir)))
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	entries := make([]entry, 0, len(des))
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue // sidecars, temporary files
		}
		s := name
		if de.IsDir() {
			s += "/" // a directory's keys sort as "name/..."
		}
		entries = append(entries, entry{de: de, sort: s})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.sort, b.sort) })
	base := ""
	if dir != "" {
		base = dir + "/"
	}
	for _, e := range entries {
		if e.de.IsDir() {
			sub := base + e.sort // ends in '/'
			if !l.wantDir(sub) {
				continue
			}
			if err := l.walk(strings.TrimSuffix(sub, "/")); err != nil {
				return err
			}
			continue
		}
		if err := l.visit(base+e.sort, e.de); err != nil {
			return err
		}
	}
	return nil
}

// wantDir reports whether the directory whose keys start with sub can hold
// keys of the page.
func (l *lister) wantDir(sub string) bool {
	if !strings.HasPrefix(sub, l.prefix) && !strings.HasPrefix(l.prefix, sub) {
		return false
	}
	if sub <= l.startAfter && !strings.HasPrefix(l.startAfter, sub) {
		return false // every key below sorts before StartAfter
	}
	if l.folded != "" && strings.HasPrefix(sub, l.folded) {
		return false
	}
	return true
}

// visit considers one key in lexical order.
func (l *lister) visit(key string, de os.DirEntry) error {
	if !strings.HasPrefix(key, l.prefix) || key <= l.startAfter {
		return nil
	}
	if l.folded != "" && strings.HasPrefix(key, l.folded) {
		return nil
	}
	if l.delimiter != "" {
		rest := key[len(l.prefix):]
		if i := strings.Index(rest, l.delimiter); i >= 0 {
			cp := l.prefix + rest[:i+len(l.delimiter)]
			l.folded = cp
			if strings.HasPrefix(l.startAfter, cp) {
				return nil // the group StartAfter is inside was returned already
			}
			if l.count == l.limit {
				l.more = true
				return errPageFull
			}
			l.page.CommonPrefixes = append(l.page.CommonPrefixes, cp)
			l.count++
			l.last = cp
			return nil
		}
	}
	if l.count == l.limit {
		l.more = true
		return errPageFull
	}
	fi, err := de.Info()
	if err != nil {
		if isNotFound(err) {
			return nil // deleted while listing
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	l.page.Objects = append(l.page.Objects, storage.Object{Key: key, Size: fi.Size(), Modified: fi.ModTime()})
	l.count++
	l.last = key
	return nil
}
