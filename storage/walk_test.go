package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
)

func TestWalk(t *testing.T) {
	s, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var want []string
	for i := range 2100 {
		k := fmt.Sprintf("w/%d/%04d", i%3, i)
		if err := s.Put(ctx, k, strings.NewReader("x"), 1, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for d := range 3 {
		for i := range 2100 {
			if i%3 == d {
				want = append(want, fmt.Sprintf("w/%d/%04d", d, i))
			}
		}
	}
	tests := []struct {
		name  string
		stop  int
		count int
	}{
		{"all", -1, len(want)},
		{"stop early", 10, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for obj, err := range storage.Walk(ctx, s, "w/") {
				if err != nil {
					t.Fatal(err)
				}
				if obj.Key != want[n] {
					t.Fatalf("object %d = %q, want %q", n, obj.Key, want[n])
				}
				n++
				if n == tc.stop {
					break
				}
			}
			if n != tc.count {
				t.Fatalf("walked %d objects, want %d", n, tc.count)
			}
		})
	}
}

// TestPages: the pages of a listing with a delimiter and a start, small
// pages, hold every common prefix and object after the start once, in order.
func TestPages(t *testing.T) {
	s, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, k := range []string{"p/a/1", "p/b/1", "p/b/2", "p/c", "p/d/1", "p/e", "p/f/1"} {
		if err := s.Put(ctx, k, strings.NewReader("x"), 1, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for page, err := range storage.Pages(ctx, s, "p/", storage.ListOptions{Delimiter: "/", StartAfter: "p/b/1", Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.CommonPrefixes...)
		for _, o := range page.Objects {
			got = append(got, o.Key)
		}
	}
	slices.Sort(got)
	if want := []string{"p/c", "p/d/", "p/e", "p/f/"}; !slices.Equal(got, want) {
		t.Fatalf("pages hold %q, want %q", got, want)
	}
}

// stuckStore returns the same non-empty Next forever.
type stuckStore struct{ storage.Store }

func (stuckStore) List(context.Context, string, storage.ListOptions) (storage.ListPage, error) {
	return storage.ListPage{Objects: []storage.Object{{Key: "a"}}, Next: "a"}, nil
}

// failingStore fails every List.
type failingStore struct{ storage.Store }

var errList = errors.New("list failed")

func (failingStore) List(context.Context, string, storage.ListOptions) (storage.ListPage, error) {
	return storage.ListPage{}, errList
}

func TestWalkErrors(t *testing.T) {
	tests := []struct {
		name    string
		store   storage.Store
		wantErr error
	}{
		{"list error", failingStore{}, errList},
		{"no progress", stuckStore{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got error
			n := 0
			for _, err := range storage.Walk(t.Context(), tc.store, "") {
				n++
				if err != nil {
					got = err
				}
				if n > 10 {
					t.Fatal("Walk does not stop")
				}
			}
			if got == nil || tc.wantErr != nil && !errors.Is(got, tc.wantErr) {
				t.Fatalf("Walk error = %v, want %v", got, tc.wantErr)
			}
			got, n = nil, 0
			for _, err := range storage.Pages(t.Context(), tc.store, "", storage.ListOptions{Delimiter: "/"}) {
				n++
				if err != nil {
					got = err
				}
				if n > 10 {
					t.Fatal("Pages does not stop")
				}
			}
			if got == nil || tc.wantErr != nil && !errors.Is(got, tc.wantErr) {
				t.Fatalf("Pages error = %v, want %v", got, tc.wantErr)
			}
		})
	}
}
