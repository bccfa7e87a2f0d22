package recorder

import (
	"context"
	"sync"
)

// lazyUnits is how many units that need no prompt handling (audio) may wait
// in a camera's queue before the pipeline goroutine is woken for them: they
// go with the next video unit, which wakes it. A camera sends an audio
// packet every 20–64 ms and a video frame every 40–200 ms; waking the
// pipeline for each was half of its wake-ups.
const lazyUnits = 8

// unitQueue is a camera's bounded queue from its source to its pipeline
// goroutine. put never waits; the consumer takes everything queued at once
// and is woken by an urgent item (video, a failure note, the close) or once
// lazyUnits others wait. An item taken keeps its place until the consumer
// is done with it (done), so the queue and the items in the consumer's
// hands are bounded together, as by a channel.
type unitQueue struct {
	wake  chan struct{} // cap 1: something urgent waits
	space chan struct{} // cap 1: a full queue was emptied

	mu     sync.Mutex
	ring   []item
	head   int // index of the oldest item
	n      int // items queued, taken ones included
	taken  int // items at the head handed to the consumer, not done
	lazy   int // items queued since the last wake
	closed bool
}

func newUnitQueue(size int) *unitQueue {
	return &unitQueue{
		ring:  make([]item, max(size, 1)),
		wake:  make(chan struct{}, 1),
		space: make(chan struct{}, 1),
	}
}

// put queues it unless the queue is full or closed, and wakes the consumer
// when it is urgent or lazyUnits wait.
func (q *unitQueue) put(it item, urgent bool) bool {
	q.mu.Lock()
	if q.closed || q.n == len(q.ring) {
		q.mu.Unlock()
		return false
	}
	q.ring[(q.head+q.n)%len(q.ring)] = it
	q.n++
	q.lazy++
	signal := urgent || q.lazy >= lazyUnits
	if signal {
		q.lazy = 0
	}
	q.mu.Unlock()
	if signal {
		q.signal(q.wake)
	}
	return true
}

// putWait queues it, waiting for room until ctx ends.
func (q *unitQueue) putWait(ctx context.Context, it item) {
	for !q.put(it, true) {
		q.mu.Lock()
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return
		}
		select {
		case <-q.space:
		case <-ctx.Done():
			return
		}
	}
}

// close ends the queue: the consumer takes what is left, then take reports
// the end.
func (q *unitQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal(q.wake)
	q.signal(q.space)
}

// take appends every queued item to buf, oldest first, waiting for an
// urgent one when none waits; false once the queue is closed and empty.
func (q *unitQueue) take(buf []item) ([]item, bool) {
	for {
		q.mu.Lock()
		if q.n > q.taken {
			for i := q.taken; i < q.n; i++ {
				buf = append(buf, q.ring[(q.head+i)%len(q.ring)])
			}
			q.taken, q.lazy = q.n, 0
			q.mu.Unlock()
			return buf, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return buf, false
		}
		<-q.wake
	}
}

// done frees the place of the oldest item taken.
func (q *unitQueue) done() {
	q.mu.Lock()
	full := q.n == len(q.ring)
	q.ring[q.head] = item{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.taken--
	q.mu.Unlock()
	if full {
		q.signal(q.space)
	}
}

func (q *unitQueue) signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
