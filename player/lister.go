package player

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/vigia/vigia/storage"
)

// Listing defaults.
const (
	// ListLookback is how far before a range's start the listing looks for
	// a segment that began earlier and overlaps it: longer than any segment.
	ListLookback = 15 * time.Minute
	// statWorkers is how many Stat calls run at once.
	statWorkers = 8
	// initCacheMax bounds the init sizes remembered by a lister.
	initCacheMax = 200_000
)

// MetaInitSize is the metadata name carrying a segment's init size, as the
// recorder stores it.
const MetaInitSize = "init-size"

// StoreLister lists segments from store by hour prefixes (the key layout
// of package storage) and reads each segment's init size from its metadata
// with Stat. Segments are immutable, so init sizes are remembered (up to
// 200,000 keys, then forgotten all at once). A segment without a valid
// init-size is left out.
func StoreLister(store storage.Store) ListFunc {
	var mu sync.Mutex
	inits := map[string]int64{}
	return func(ctx context.Context, camera string, fromMs, toMs int64) ([]StoredSegment, error) {
		if !storage.ValidCameraID(camera) {
			return nil, fmt.Errorf("list recordings: camera %q: %w", camera, storage.ErrInvalidKey)
		}
		var out []StoredSegment
		first := time.UnixMilli(fromMs).Add(-ListLookback).UTC().Truncate(time.Hour)
		for h := first; h.UnixMilli() < toMs; h = h.Add(time.Hour) {
			for obj, err := range storage.Walk(ctx, store, storage.SegmentPrefix(camera, h)) {
				if err != nil {
					return nil, fmt.Errorf("list recordings: %w", err)
				}
				cam, start, dur, err := storage.ParseSegmentKey(obj.Key)
				if err != nil || cam != camera || start+dur <= fromMs || start >= toMs {
					continue
				}
				out = append(out, StoredSegment{Key: obj.Key, StartMs: start, DurationMs: dur, Size: obj.Size})
			}
		}
		// Init sizes: remembered ones first, then Stat the rest in parallel.
		var todo []int
		mu.Lock()
		for i := range out {
			if n, ok := inits[out[i].Key]; ok {
				out[i].InitSize = n
			} else {
				todo = append(todo, i)
			}
		}
		mu.Unlock()
		if err := statInits(ctx, store, out, todo); err != nil {
			return nil, err
		}
		mu.Lock()
		if len(inits)+len(todo) > initCacheMax {
			clear(inits)
		}
		kept := out[:0]
		for _, s := range out {
			if s.InitSize > 0 && s.InitSize < s.Size {
				inits[s.Key] = s.InitSize
				kept = append(kept, s)
			}
		}
		mu.Unlock()
		return kept, nil
	}
}

// statInits fills InitSize of segs[i] for each i of todo.
func statInits(ctx context.Context, store storage.Store, segs []StoredSegment, todo []int) error {
	if len(todo) == 0 {
		return nil
	}
	work := make(chan int)
	errs := make(chan error, statWorkers)
	var wg sync.WaitGroup
	for range min(statWorkers, len(todo)) {
		wg.Add(1)
		go func() { // exits when work is closed
			defer wg.Done()
			for i := range work {
				obj, err := store.Stat(ctx, segs[i].Key)
				if errors.Is(err, storage.ErrNotFound) {
					continue // deleted meanwhile (retention): left out
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("stat %s: %w", segs[i].Key, err):
					default:
					}
					continue
				}
				if n, err := strconv.ParseInt(obj.Metadata[MetaInitSize], 10, 64); err == nil {
					segs[i].InitSize = n
				}
			}
		}()
	}
	for _, i := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}
