// Package storagetest is the conformance suite every storage.Store backend
// runs from its own tests.
package storagetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// opTimeout bounds each store call of the suite, so a hung backend fails
// instead of blocking the test binary.
const opTimeout = 2 * time.Minute

// putConcurrency bounds the parallel Puts that fill large listings.
const putConcurrency = 8

// Run checks that the stores made by newStore keep the storage.Store
// contract. newStore is called once per subtest and must return an empty
// store whose SignedURL results can be fetched with net/http. No case stores
// both a key and a key below it ("a" and "a/b"), which the fs backend cannot.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"RoundTripMetadata", testRoundTrip},
		{"DefaultContentType", testDefaultContentType},
		{"RangedRead", testRangedRead},
		{"NotFound", testNotFound},
		{"InvalidKeys", testInvalidKeys},
		{"Overwrite", testOverwrite},
		{"FailingReaderLeavesNothing", testFailingReader},
		{"SizeMismatch", testSizeMismatch},
		{"ListPaging", testListPaging},
		{"ListSmallPagesNested", testListSmallPages},
		{"ListDelimiter", testListDelimiter},
		{"PrefixIsolation", testPrefixIsolation},
		{"BatchDelete", testBatchDelete},
		{"SignedURL", testSignedURL},
		{"SignedURLExpired", testSignedURLExpired},
		{"LargeMultipart", testLarge},
		{"PingDescribe", testPingDescribe},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newStore(t))
		})
	}
}

// ctx returns a context for one store call that ends with the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), opTimeout)
	t.Cleanup(cancel)
	return c
}

// put stores data under key, failing the test on error.
func put(t *testing.T, s storage.Store, key string, data []byte, opts storage.PutOptions) {
	t.Helper()
	if err := s.Put(ctx(t), key, bytesReader(data), int64(len(data)), opts); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// get reads the object key from offset for length bytes.
func get(t *testing.T, s storage.Store, key string, offset, length int64) ([]byte, error) {
	t.Helper()
	rc, err := s.Get(ctx(t), key, offset, length)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// putMany stores a small object under every key with bounded concurrency.
func putMany(t *testing.T, s storage.Store, keys []string) {
	t.Helper()
	c := ctx(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		firstEr error
	)
	work := make(chan string)
	for range putConcurrency {
		wg.Add(1)
		go func() { // exits when work is closed
			defer wg.Done()
			for key := range work {
				data := []byte(key)
				if err := s.Put(c, key, bytesReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = fmt.Errorf("put %q: %w", key, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if firstEr != nil {
		t.Fatal(firstEr)
	}
}

// listAll pages through List and returns every object key and common prefix
// in the order the pages gave them, and the number of pages.
func listAll(t *testing.T, s storage.Store, prefix string, opts storage.ListOptions) (entries []string, pages int) {
	t.Helper()
	for {
		page, err := s.List(ctx(t), prefix, opts)
		if err != nil {
			t.Fatalf("List(%q, %+v): %v", prefix, opts, err)
		}
		pages++
		if opts.Limit > 0 && len(page.Objects)+len(page.CommonPrefixes) > opts.Limit {
			t.Fatalf("page of %d entries, limit %d", len(page.Objects)+len(page.CommonPrefixes), opts.Limit)
		}
		entries = append(entries, mergeSorted(page)...)
		if page.Next == "" {
			return entries, pages
		}
		if page.Next <= opts.StartAfter {
			t.Fatalf("Next %q does not advance past %q", page.Next, opts.StartAfter)
		}
		opts.StartAfter = page.Next
		if pages > 100000 {
			t.Fatal("listing does not end")
		}
	}
}

// mergeSorted merges a page's objects and prefixes into one lexical sequence.
func mergeSorted(p storage.ListPage) []string {
	out := make([]string, 0, len(p.Objects)+len(p.CommonPrefixes))
	i, j := 0, 0
	for i < len(p.Objects) || j < len(p.CommonPrefixes) {
		if j >= len(p.CommonPrefixes) || i < len(p.Objects) && p.Objects[i].Key < p.CommonPrefixes[j] {
			out = append(out, p.Objects[i].Key)
			i++
		} else {
			out = append(out, p.CommonPrefixes[j])
			j++
		}
	}
	return out
}

// requireNotFound fails unless err wraps storage.ErrNotFound.
func requireNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("%s: err = %v, want storage.ErrNotFound", what, err)
	}
}
