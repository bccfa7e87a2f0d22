package catalogue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/vigia/vigia/storage"
)

// MetaInitSize is the metadata name carrying a segment's init size
// (storage.SegmentMeta).
const MetaInitSize = storage.MetaInitSize

// initCache remembers init sizes by segment key (segments are immutable),
// in two generations: when the newer holds half the bound, it becomes the
// older and the oldest is forgotten, so the cache holds at most the bound
// and keeps what is read often.
type initCache struct {
	max int

	mu       sync.Mutex
	cur, old map[string]int64

	hits, misses atomic.Uint64
}

func newInitCache(max int) *initCache {
	return &initCache{max: max, cur: map[string]int64{}, old: map[string]int64{}}
}

func (c *initCache) get(key string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.cur[key]; ok {
		return n, true
	}
	if n, ok := c.old[key]; ok {
		c.putLocked(key, n)
		return n, true
	}
	return 0, false
}

func (c *initCache) put(key string, n int64) {
	c.mu.Lock()
	c.putLocked(key, n)
	c.mu.Unlock()
}

func (c *initCache) putLocked(key string, n int64) {
	if len(c.cur) >= c.max/2 {
		c.old, c.cur = c.cur, make(map[string]int64, len(c.cur))
	}
	c.cur[key] = n
}

func (c *initCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

// CacheStats counts the init size cache's answers (init sizes from keys
// are not counted).
type CacheStats struct {
	// Hits are init sizes found in the cache; Misses those read with Stat.
	Hits, Misses uint64
	// Entries is how many init sizes the cache holds.
	Entries int
}

// CacheStats returns the init size cache's counts.
func (c *Catalogue) CacheStats() CacheStats {
	return CacheStats{Hits: c.inits.hits.Load(), Misses: c.inits.misses.Load(), Entries: c.inits.len()}
}

// NoteInitSize remembers the init size of the segment stored at key (the
// recorder knows it when it uploads; segment notices carry it), so that no
// Stat is needed for it. A key that carries its init size is not
// remembered: its listing gives it.
func (c *Catalogue) NoteInitSize(key string, n int64) {
	if n <= 0 || key == "" {
		return
	}
	if _, _, _, keyed, err := storage.ParseSegmentKey(key); err == nil && keyed > 0 {
		return
	}
	c.inits.put(key, n)
}

// InitSizes fills InitSize of each segment that does not have it yet (a
// key of the older form {startMs}_{durMs}.mp4, which does not carry it)
// from the cache, reading the others' init-size metadata with Stat
// (StatWorkers at once) and remembering them. A segment deleted meanwhile,
// or stored without init-size, keeps InitSize 0. Segments listed with
// keys that carry their init sizes need no Stat and no cache.
func (c *Catalogue) InitSizes(ctx context.Context, segs []Segment) error {
	var todo []int
	for i := range segs {
		if segs[i].InitSize > 0 {
			continue // from the key
		}
		if n, ok := c.inits.get(segs[i].Key); ok {
			segs[i].InitSize = n
			c.inits.hits.Add(1)
		} else {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	c.inits.misses.Add(uint64(len(todo)))
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range min(c.cfg.StatWorkers, len(todo)) {
		wg.Add(1)
		go func() { // exits when work is closed
			defer wg.Done()
			for i := range work {
				obj, err := c.cfg.Store.Stat(ctx, segs[i].Key)
				if errors.Is(err, storage.ErrNotFound) {
					continue // deleted meanwhile (retention)
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("stat %s: %w", segs[i].Key, err):
					default:
					}
					continue
				}
				n, err := strconv.ParseInt(obj.Metadata[MetaInitSize], 10, 64)
				if err == nil && n > 0 && n < obj.Size {
					segs[i].InitSize = n
					c.inits.put(segs[i].Key, n)
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
