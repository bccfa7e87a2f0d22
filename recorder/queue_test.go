package recorder

import (
	"context"
	"testing"
	"testing/synctest"
)

// TestUnitQueue: lazy items wake the consumer only with an urgent one or
// once lazyUnits wait; a full queue refuses; items come out in order, also
// across the ring's end; close lets the consumer drain, then ends it; a
// waiting putWait gets in once the consumer empties the queue.
func TestUnitQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newUnitQueue(12)
		got := make(chan []item, 100)
		go func() {
			var buf []item
			for {
				var ok bool
				buf, ok = q.take(nil)
				for range buf {
					q.done()
				}
				if len(buf) > 0 {
					got <- buf
				}
				if !ok {
					close(got)
					return
				}
			}
		}()
		synctest.Wait()
		for i := range lazyUnits - 1 {
			if !q.put(item{size: int32(i)}, false) {
				t.Fatal("put refused")
			}
		}
		synctest.Wait()
		if len(got) != 0 {
			t.Fatalf("consumer woken by %d lazy items, fewer than lazyUnits", lazyUnits-1)
		}
		q.put(item{size: 100}, true) // urgent: wakes it
		synctest.Wait()
		b := <-got
		if len(b) != lazyUnits || b[len(b)-1].size != 100 {
			t.Fatalf("took %d items, want the %d queued, in order", len(b), lazyUnits)
		}
		for i, it := range b[:lazyUnits-1] {
			if it.size != int32(i) {
				t.Fatalf("item %d is %d", i, it.size)
			}
		}
		// lazyUnits lazy items wake it on their own.
		for i := range lazyUnits {
			q.put(item{size: int32(i)}, false)
		}
		synctest.Wait()
		if b := <-got; len(b) != lazyUnits {
			t.Fatalf("took %d lazy items, want %d", len(b), lazyUnits)
		}
		// Full: the 13th is refused; the ring wraps (head was reset, fill
		// past the end of a ring emptied partway is covered by order).
		q2 := newUnitQueue(3)
		for i := range 3 {
			if !q2.put(item{size: int32(i)}, false) {
				t.Fatal("refused before full")
			}
		}
		if q2.put(item{size: 3}, true) {
			t.Fatal("full queue took an item")
		}
		done := make(chan struct{})
		go func() {
			q2.putWait(context.Background(), item{size: 9})
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("putWait returned while the queue was full")
		default:
		}
		b2, _ := q2.take(nil)
		if len(b2) != 3 || b2[0].size != 0 || b2[2].size != 2 {
			t.Fatalf("took %v", b2)
		}
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("putWait got in while the items taken were not done")
		default:
		}
		q2.done()
		<-done
		q2.done()
		q2.done()
		if b2, _ = q2.take(nil); len(b2) != 1 || b2[0].size != 9 {
			t.Fatalf("after putWait took %v", b2)
		}

		// close: what is queued is taken, then the end.
		q.put(item{size: 7}, false)
		q.close()
		var last []item
		for b := range got {
			last = append(last, b...)
		}
		if len(last) != 1 || last[0].size != 7 {
			t.Fatalf("after close took %v", last)
		}
		if q.put(item{}, true) {
			t.Fatal("closed queue took an item")
		}
	})
}
