package storage

import (
	"context"
	"fmt"
	"iter"
)

// Pages yields the pages of the listing of prefix with opts, from
// opts.StartAfter on, each page continuing after the previous one's Next.
// It stops after the last page (Next ""), and yields an error once and
// stops when a List fails or a page's Next does not advance past the
// position it was listed from. Every paging loop over a Store is this one.
func Pages(ctx context.Context, s Store, prefix string, opts ListOptions) iter.Seq2[ListPage, error] {
	return func(yield func(ListPage, error) bool) {
		for {
			page, err := s.List(ctx, prefix, opts)
			if err != nil {
				yield(ListPage{}, err)
				return
			}
			if !yield(page, nil) || page.Next == "" {
				return
			}
			if page.Next <= opts.StartAfter {
				yield(ListPage{}, fmt.Errorf("list of %q did not advance past %q", prefix, opts.StartAfter))
				return
			}
			opts.StartAfter = page.Next
		}
	}
}

// Walk yields every object below prefix in lexical order, paging through
// s.List (Pages). On an error it yields the error once and stops.
func Walk(ctx context.Context, s Store, prefix string) iter.Seq2[Object, error] {
	return func(yield func(Object, error) bool) {
		for page, err := range Pages(ctx, s, prefix, ListOptions{}) {
			if err != nil {
				yield(Object{}, err)
				return
			}
			for _, o := range page.Objects {
				if !yield(o, nil) {
					return
				}
			}
		}
	}
}
