package storagetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vigia/vigia/storage"
)

func testListPaging(t *testing.T, s storage.Store) {
	const n = 2500
	keys := make([]string, 0, n+2)
	for i := range n {
		keys = append(keys, fmt.Sprintf("many/%02d/%05d.jpg", i/100, i))
	}
	putMany(t, s, append(keys, "manyx/outside", "man/outside"))

	entries, pages := listAll(t, s, "many/", storage.ListOptions{Limit: 1000})
	if !slices.Equal(entries, keys) {
		t.Fatalf("listing of %d keys differs from the %d put (first %v)", len(entries), n, entries[:min(3, len(entries))])
	}
	if pages < 3 {
		t.Fatalf("%d keys in %d pages of 1000", n, pages)
	}

	var walked []string
	for obj, err := range storage.Walk(ctx(t), s, "many/") {
		if err != nil {
			t.Fatalf("Walk: %v", err)
		}
		if obj.Size != int64(len(obj.Key)) {
			t.Fatalf("Walk object %q size %d, want %d", obj.Key, obj.Size, len(obj.Key))
		}
		walked = append(walked, obj.Key)
	}
	if !slices.Equal(walked, keys) {
		t.Fatalf("Walk gave %d keys, want %d", len(walked), n)
	}
}

func testListSmallPages(t *testing.T, s storage.Store) {
	keys := []string{"n/a!", "n/a-b/1", "n/a.txt", "n/a/b/c/d", "n/a/b/e", "n/a/c", "n/b", "n/ba/x", "n/c/d"}
	putMany(t, s, keys)
	tests := []struct {
		name   string
		prefix string
		opts   storage.ListOptions
		want   []string
	}{
		{"all by 1", "n/", storage.ListOptions{Limit: 1}, keys},
		{"all by 2", "n/", storage.ListOptions{Limit: 2}, keys},
		{"all by 4", "", storage.ListOptions{Limit: 4}, keys},
		{"partial segment", "n/a", storage.ListOptions{Limit: 2}, keys[:6]},
		{"deep prefix", "n/a/b/", storage.ListOptions{Limit: 1}, []string{"n/a/b/c/d", "n/a/b/e"}},
		{"start after key", "n/", storage.ListOptions{Limit: 3, StartAfter: "n/a/b/c/d"}, keys[4:]},
		{"start after non-key", "n/", storage.ListOptions{Limit: 3, StartAfter: "n/a/b/d"}, keys[4:]},
		{"start after everything", "n/", storage.ListOptions{StartAfter: "n/z"}, nil},
		{"missing prefix", "nothing/", storage.ListOptions{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := listAll(t, s, tc.prefix, tc.opts)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("List(%q, %+v) = %v, want %v", tc.prefix, tc.opts, got, tc.want)
			}
		})
	}
}

func testListDelimiter(t *testing.T, s storage.Store) {
	putMany(t, s, []string{
		"d/a/1", "d/a/b/1", "d/a/b/2", "d/a/c/x/1", "d/a/d", "d/a.txt", "d/a-b/1", "d/z",
	})
	tests := []struct {
		name   string
		prefix string
		opts   storage.ListOptions
		want   []string
	}{
		{"level", "d/a/", storage.ListOptions{Delimiter: "/"}, []string{"d/a/1", "d/a/b/", "d/a/c/", "d/a/d"}},
		{"level by 1", "d/a/", storage.ListOptions{Delimiter: "/", Limit: 1}, []string{"d/a/1", "d/a/b/", "d/a/c/", "d/a/d"}},
		{"top", "d/", storage.ListOptions{Delimiter: "/", Limit: 2}, []string{"d/a-b/", "d/a.txt", "d/a/", "d/z"}},
		{"partial", "d/a", storage.ListOptions{Delimiter: "/"}, []string{"d/a-b/", "d/a.txt", "d/a/"}},
		{"after prefix", "d/a/", storage.ListOptions{Delimiter: "/", StartAfter: "d/a/b/"}, []string{"d/a/c/", "d/a/d"}},
		{"after key inside prefix", "d/a/", storage.ListOptions{Delimiter: "/", StartAfter: "d/a/b/1"}, []string{"d/a/c/", "d/a/d"}},
		{"root", "", storage.ListOptions{Delimiter: "/"}, []string{"d/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := listAll(t, s, tc.prefix, tc.opts)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("List(%q, %+v) = %v, want %v", tc.prefix, tc.opts, got, tc.want)
			}
		})
	}
	page, err := s.List(ctx(t), "d/a/", storage.ListOptions{Delimiter: "/"})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if !slices.Equal(page.CommonPrefixes, []string{"d/a/b/", "d/a/c/"}) || len(page.Objects) != 2 {
		t.Fatalf("page = %+v, want 2 objects and prefixes d/a/b/, d/a/c/", page)
	}
}

func testPrefixIsolation(t *testing.T, s storage.Store) {
	putMany(t, s, []string{"a/b/1", "a/b/2", "a/bc/1", "a/b-c/1", "a/b.c"})
	tests := []struct {
		prefix string
		want   []string
	}{
		{"a/b/", []string{"a/b/1", "a/b/2"}},
		{"a/bc/", []string{"a/bc/1"}},
		{"a/b", []string{"a/b-c/1", "a/b.c", "a/b/1", "a/b/2", "a/bc/1"}},
		{"a/b/1", []string{"a/b/1"}},
	}
	for _, tc := range tests {
		t.Run(tc.prefix, func(t *testing.T) {
			got, _ := listAll(t, s, tc.prefix, storage.ListOptions{})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("List(%q) = %v, want %v", tc.prefix, got, tc.want)
			}
		})
	}
}

func testBatchDelete(t *testing.T, s storage.Store) {
	const n = 1500
	keys := make([]string, 0, n)
	for i := range n {
		keys = append(keys, fmt.Sprintf("del/%02d/%05d", i%30, i))
	}
	putMany(t, s, append(slices.Clone(keys), "keep/one"))
	toDelete := append(slices.Clone(keys), "del/never/existed", "other/missing")
	if err := s.Delete(ctx(t), toDelete); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got, _ := listAll(t, s, "del/", storage.ListOptions{}); len(got) != 0 {
		t.Fatalf("%d keys left after Delete, first %q", len(got), got[0])
	}
	_, err := s.Stat(ctx(t), keys[0])
	requireNotFound(t, "Stat after Delete", err)
	if got, _ := listAll(t, s, "", storage.ListOptions{}); !slices.Equal(got, []string{"keep/one"}) {
		t.Fatalf("List after Delete = %v, want [keep/one]", got)
	}
	if err := s.Delete(ctx(t), nil); err != nil {
		t.Fatalf("Delete(nil): %v", err)
	}
}
