package storage

import (
	"context"
	"fmt"
	"iter"
)

// Walk yields every object below prefix in lexical order, paging through
// s.List. On an error it yields the error once and stops.
func Walk(ctx context.Context, s Store, prefix string) iter.Seq2[Object, error] {
	return func(yield func(Object, error) bool) {
		opts := ListOptions{}
		for {
			page, err := s.List(ctx, prefix, opts)
			if err != nil {
				yield(Object{}, err)
				return
			}
			for _, o := range page.Objects {
				if !yield(o, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			if page.Next <= opts.StartAfter {
				yield(Object{}, fmt.Errorf("list of %q did not advance past %q", prefix, opts.StartAfter))
				return
			}
			opts.StartAfter = page.Next
		}
	}
}
