package cluster

import (
	"context"
	"errors"
	"sync"
	"time"
)

// memBucket is an in-memory Bucket with the semantics of a JetStream KV
// bucket (one revision sequence, compare-and-set, watch with current
// entries first), plus faults for tests: a delay per operation and a hook
// that can fail an operation, before or after applying it.
type memBucket struct {
	mu       sync.Mutex
	rev      uint64
	data     map[string]Entry
	watchers []chan Entry

	// delay, when set, returns how long op on key takes; the operation is
	// applied at the end of it, unless ctx ended first.
	delay func(op, key string) time.Duration

	// hook, when set, decides the fate of op on key: apply it or not, and
	// the error to return (an applied write with an error is a write whose
	// answer was lost).
	hook func(op, key string) (apply bool, err error)
}

func newMemBucket() *memBucket { return &memBucket{data: map[string]Entry{}} }

var _ Bucket = (*memBucket)(nil)

// errLostAnswer is what a client sees when a request's answer never comes.
var errLostAnswer = context.DeadlineExceeded

func (b *memBucket) before(ctx context.Context, op, key string) (apply bool, err error) {
	b.mu.Lock()
	delay, hook := b.delay, b.hook
	b.mu.Unlock()
	if delay != nil {
		if d := delay(op, key); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-t.C:
			}
		}
	}
	if hook != nil {
		return hook(op, key)
	}
	return true, nil
}

func (b *memBucket) setFaults(delay func(op, key string) time.Duration, hook func(op, key string) (bool, error)) {
	b.mu.Lock()
	b.delay, b.hook = delay, hook
	b.mu.Unlock()
}

func (b *memBucket) Get(ctx context.Context, key string) (Entry, error) {
	if _, err := b.before(ctx, "get", key); err != nil {
		return Entry{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.data[key]
	if !ok || e.Deleted {
		return Entry{}, ErrNotFound
	}
	return e, nil
}

// write applies a write under b.mu: cond checks the current entry.
func (b *memBucket) write(ctx context.Context, op, key string, value []byte, del bool, cond func(cur Entry, ok bool) error) (uint64, error) {
	apply, herr := b.before(ctx, op, key)
	if !apply {
		if herr == nil {
			herr = errLostAnswer
		}
		return 0, herr
	}
	b.mu.Lock()
	cur, ok := b.data[key]
	if ok && cur.Deleted {
		ok = false
	}
	if err := cond(cur, ok); err != nil {
		b.mu.Unlock()
		return 0, err
	}
	b.rev++
	e := Entry{Key: key, Value: append([]byte(nil), value...), Rev: b.rev, Deleted: del}
	b.data[key] = e
	for _, w := range b.watchers {
		w <- e
	}
	b.mu.Unlock()
	if herr != nil {
		return 0, herr
	}
	return e.Rev, nil
}

func (b *memBucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	return b.write(ctx, "create", key, value, false, func(_ Entry, ok bool) error {
		if ok {
			return ErrWrongRevision
		}
		return nil
	})
}

func (b *memBucket) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	return b.write(ctx, "update", key, value, false, func(cur Entry, ok bool) error {
		if !ok || cur.Rev != rev {
			return ErrWrongRevision
		}
		return nil
	})
}

func (b *memBucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return b.write(ctx, "put", key, value, false, func(Entry, bool) error { return nil })
}

func (b *memBucket) Delete(ctx context.Context, key string, rev uint64) error {
	_, err := b.write(ctx, "delete", key, nil, true, func(cur Entry, ok bool) error {
		if rev != 0 && (!ok || cur.Rev != rev) {
			return ErrWrongRevision
		}
		return nil
	})
	return err
}

func (b *memBucket) Watch(ctx context.Context) (<-chan Entry, error) {
	b.mu.Lock()
	in := make(chan Entry, 4096)
	for _, e := range b.data {
		if !e.Deleted {
			in <- e
		}
	}
	in <- Entry{}
	b.watchers = append(b.watchers, in)
	b.mu.Unlock()
	out := make(chan Entry)
	go func() {
		defer close(out)
		defer b.unwatch(in)
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-in:
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func (b *memBucket) unwatch(ch chan Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, w := range b.watchers {
		if w == ch {
			b.watchers = append(b.watchers[:i], b.watchers[i+1:]...)
			return
		}
	}
}

// value returns key's current value, nil when it has none.
func (b *memBucket) value(key string) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.data[key]
	if !ok || e.Deleted {
		return nil
	}
	return e.Value
}

var errInjected = errors.New("injected failure")

// revision returns the bucket's last revision.
func (b *memBucket) revision() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rev
}
