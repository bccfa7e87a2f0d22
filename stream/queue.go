package stream

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/vigia/vigia/media"
)

// Kind is what a unit is to a Queue's drop rule.
type Kind uint8

const (
	// Other is a unit that is decoded alone (audio, a note): when it is
	// dropped, nothing else is.
	Other Kind = iota
	// Delta is a video frame that refers to the frames before it: once a
	// video frame was dropped, Delta frames are dropped until the next
	// Keyframe, so that a reader never gets a frame it cannot decode.
	Delta
	// Keyframe is a video frame that starts a GOP; it ends a drop.
	Keyframe
)

// KindOf returns the kind of u, a unit of the video track when video is
// set.
func KindOf(u *media.Unit, video bool) Kind {
	switch {
	case !video:
		return Other
	case u.Key:
		return Keyframe
	}
	return Delta
}

// Result says whether Put queued a unit, or why it dropped it.
type Result uint8

const (
	// Queued: the unit is queued.
	Queued Result = iota
	// DropFull: the queue held QueueConfig.Size entries.
	DropFull
	// DropBytes: the queues sharing QueueConfig.Bytes held MaxBytes.
	DropBytes
	// DropUntilKey: a Delta frame after a video frame was dropped, before
	// the next Keyframe.
	DropUntilKey
	// DropClosed: the queue is closed.
	DropClosed
)

// String returns the reason's name.
func (r Result) String() string {
	switch r {
	case Queued:
		return "queued"
	case DropFull:
		return "full"
	case DropBytes:
		return "bytes"
	case DropUntilKey:
		return "until_key"
	}
	return "closed"
}

// Drops counts the units a Queue dropped, by reason.
type Drops struct {
	Full, Bytes, UntilKey, Closed uint64
}

// Total returns the units dropped for any reason.
func (d Drops) Total() uint64 { return d.Full + d.Bytes + d.UntilKey + d.Closed }

// Entry is one queued value.
type Entry[T any] struct {
	Value T
	// Size is the unit's bytes, counted in QueueConfig.Bytes until Done.
	Size int32
	// Gap is set on a Keyframe that ends a drop: frames before it were
	// lost.
	Gap bool
}

// QueueConfig configures a Queue.
type QueueConfig[T any] struct {
	// Size is the number of entries the queue holds, those taken and not
	// done included. It defaults to 1.
	Size int

	// Lazy is how many Other entries may wait before the reader is woken
	// for them; a video frame or a PutWait entry wakes it at once. It
	// defaults to 1: every entry wakes the reader.
	Lazy int

	// Bytes, when set, is the media bytes waiting in every queue that
	// shares it, bounded by MaxBytes: a unit that would pass MaxBytes is
	// dropped (DropBytes). Every entry taken must be Done for its bytes
	// to leave the count.
	Bytes    *atomic.Int64
	MaxBytes int64

	// Keep, optional, is called on a value once Put accepted it, before
	// the reader can take it (under the queue's lock): a value that points
	// into memory the caller reuses copies it here. Values dropped are
	// never copied.
	Keep func(*T)
}

// Queue is a bounded queue of one camera's units from the goroutine that
// produces them to the one goroutine that reads them. Put never waits: a
// unit that finds no room is dropped and counted, and after a video frame
// is dropped, video resumes at the next keyframe (Kind). The reader takes
// everything queued at once and is woken by a video frame, a PutWait
// entry, the close, or once Lazy other entries wait. An entry taken keeps
// its place until the reader is done with it (Done), so the queue and the
// entries in the reader's hands are bounded together, as by a channel.
//
// Put, PutWait, Resume and Close may be called from any goroutine; Take,
// Poll and Done only by the reader.
type Queue[T any] struct {
	cfg   QueueConfig[T]
	wake  chan struct{} // cap 1: something urgent waits
	space chan struct{} // cap 1: a full queue was emptied

	mu       sync.Mutex
	ring     []Entry[T]
	head     int  // index of the oldest entry
	n        int  // entries queued, taken ones included
	taken    int  // entries at the head handed to the reader, not done
	lazy     int  // entries queued since the last wake
	skipping bool // a video frame was dropped: Delta frames are dropped
	closed   bool
	drops    Drops
}

// NewQueue returns an empty Queue.
func NewQueue[T any](cfg QueueConfig[T]) *Queue[T] {
	cfg.Size = max(cfg.Size, 1)
	cfg.Lazy = max(cfg.Lazy, 1)
	return &Queue[T]{
		cfg:   cfg,
		ring:  make([]Entry[T], cfg.Size),
		wake:  make(chan struct{}, 1),
		space: make(chan struct{}, 1),
	}
}

// Put queues v, a unit of kind and size bytes, unless the drop rule or the
// bounds refuse it; it never waits. It returns Queued, or why v was
// dropped (counted in Drops).
func (q *Queue[T]) Put(v T, kind Kind, size int) Result {
	q.mu.Lock()
	r := q.admit(kind, size)
	if r != Queued {
		q.count(r)
		if kind != Other {
			q.skipping = true
		}
		q.mu.Unlock()
		return r
	}
	e := &q.ring[(q.head+q.n)%len(q.ring)]
	*e = Entry[T]{Value: v, Size: int32(size), Gap: kind == Keyframe && q.skipping}
	if kind == Keyframe {
		q.skipping = false
	}
	if q.cfg.Keep != nil {
		q.cfg.Keep(&e.Value)
	}
	q.n++
	q.lazy++
	signal := kind != Other || q.lazy >= q.cfg.Lazy
	if signal {
		q.lazy = 0
	}
	q.mu.Unlock()
	if signal {
		notify(q.wake)
	}
	return Queued
}

// admit returns whether a unit of kind and size may be queued, and counts
// its bytes when so. Called under q.mu.
func (q *Queue[T]) admit(kind Kind, size int) Result {
	switch {
	case q.closed:
		return DropClosed
	case q.skipping && kind == Delta:
		return DropUntilKey
	case q.n == len(q.ring):
		return DropFull
	}
	if b := q.cfg.Bytes; b != nil && size > 0 {
		if b.Add(int64(size)) > q.cfg.MaxBytes {
			b.Add(-int64(size))
			return DropBytes
		}
	}
	return Queued
}

func (q *Queue[T]) count(r Result) {
	switch r {
	case DropFull:
		q.drops.Full++
	case DropBytes:
		q.drops.Bytes++
	case DropUntilKey:
		q.drops.UntilKey++
	case DropClosed:
		q.drops.Closed++
	}
}

// PutWait queues v, of no bytes and never dropped by the drop rule,
// waiting for room until ctx ends or the queue is closed; it reports
// whether v was queued. It wakes the reader.
func (q *Queue[T]) PutWait(ctx context.Context, v T) bool {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return false
		}
		if q.n < len(q.ring) {
			q.ring[(q.head+q.n)%len(q.ring)] = Entry[T]{Value: v}
			q.n++
			q.lazy = 0
			q.mu.Unlock()
			notify(q.wake)
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-ctx.Done():
			return false
		}
	}
}

// Resume starts a new run of the source: its first units are queued
// without waiting for a keyframe.
func (q *Queue[T]) Resume() {
	q.mu.Lock()
	q.skipping = false
	q.mu.Unlock()
}

// Close ends the queue: Put and PutWait refuse from now on, the reader
// takes what is left, then Take reports the end.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	notify(q.wake)
	notify(q.space)
}

// Take appends every queued entry not taken yet to buf, oldest first,
// waiting for an urgent one when none waits; false once the queue is
// closed and every entry taken.
func (q *Queue[T]) Take(buf []Entry[T]) ([]Entry[T], bool) {
	for {
		n := len(buf)
		var closed bool
		if buf, closed = q.poll(buf); len(buf) > n {
			return buf, true
		}
		if closed {
			return buf, false
		}
		<-q.wake
	}
}

// Poll appends every queued entry not taken yet to buf, oldest first,
// without waiting; a reader that waits for other things too waits for
// Ready, then polls.
func (q *Queue[T]) Poll(buf []Entry[T]) []Entry[T] {
	buf, _ = q.poll(buf)
	return buf
}

func (q *Queue[T]) poll(buf []Entry[T]) ([]Entry[T], bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := q.taken; i < q.n; i++ {
		buf = append(buf, q.ring[(q.head+i)%len(q.ring)])
	}
	q.taken, q.lazy = q.n, 0
	return buf, q.closed
}

// Ready is signalled when entries wait for the reader (or the queue was
// closed); the reader then calls Poll. A signal may find nothing new.
func (q *Queue[T]) Ready() <-chan struct{} { return q.wake }

// Done frees the place of the oldest entry taken, and its bytes.
func (q *Queue[T]) Done() {
	q.mu.Lock()
	full := q.n == len(q.ring)
	e := &q.ring[q.head]
	if b := q.cfg.Bytes; b != nil && e.Size > 0 {
		b.Add(-int64(e.Size))
	}
	*e = Entry[T]{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.taken--
	q.mu.Unlock()
	if full {
		notify(q.space)
	}
}

// Drops returns the units dropped so far, by reason.
func (q *Queue[T]) Drops() Drops {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.drops
}

// Len returns the number of entries in the queue, those taken and not
// done included.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
