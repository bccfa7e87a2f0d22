package stream

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/vigia/vigia/media"
)

// TestQueueWaking: Other entries wake the reader only with a video frame
// or once Lazy wait; entries come out in order; close lets the reader
// drain, then ends it.
func TestQueueWaking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lazy = 8
		q := NewQueue(QueueConfig[int]{Size: 12, Lazy: lazy})
		got := make(chan []Entry[int], 100)
		go func() {
			for {
				buf, ok := q.Take(nil)
				for range buf {
					q.Done()
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
		for i := range lazy - 1 {
			if r := q.Put(i, Other, 0); r != Queued {
				t.Fatalf("put: %v", r)
			}
		}
		synctest.Wait()
		if len(got) != 0 {
			t.Fatalf("reader woken by %d Other entries, fewer than Lazy", lazy-1)
		}
		q.Put(100, Delta, 0) // video: wakes it
		synctest.Wait()
		b := <-got
		if len(b) != lazy || b[len(b)-1].Value != 100 {
			t.Fatalf("took %d entries, want the %d queued, in order", len(b), lazy)
		}
		for i, e := range b[:lazy-1] {
			if e.Value != i {
				t.Fatalf("entry %d is %d", i, e.Value)
			}
		}
		for i := range lazy {
			q.Put(i, Other, 0)
		}
		synctest.Wait()
		if b := <-got; len(b) != lazy {
			t.Fatalf("took %d Other entries, want %d", len(b), lazy)
		}

		q.Put(7, Other, 0)
		q.Close()
		var last []Entry[int]
		for b := range got {
			last = append(last, b...)
		}
		if len(last) != 1 || last[0].Value != 7 {
			t.Fatalf("after close took %v", last)
		}
		if r := q.Put(0, Keyframe, 0); r != DropClosed {
			t.Fatalf("closed queue: %v", r)
		}
	})
}

// TestQueueReady: a reader that waits for other things too is signalled
// by a video frame, by Lazy other entries and by the close, and polls.
func TestQueueReady(t *testing.T) {
	q := NewQueue(QueueConfig[int]{Size: 8, Lazy: 2})
	ready := func() bool {
		select {
		case <-q.Ready():
			return true
		default:
			return false
		}
	}
	q.Put(1, Other, 0)
	if ready() {
		t.Fatal("signalled by one Other entry of Lazy 2")
	}
	q.Put(2, Other, 0)
	if !ready() {
		t.Fatal("not signalled by Lazy Other entries")
	}
	q.Put(3, Delta, 0)
	if !ready() {
		t.Fatal("not signalled by a video frame")
	}
	if b := q.Poll(nil); len(b) != 3 || b[2].Value != 3 {
		t.Fatalf("polled %v", b)
	}
	if b := q.Poll(nil); len(b) != 0 {
		t.Fatalf("polled %v again", b)
	}
	q.Close()
	if !ready() {
		t.Fatal("not signalled by the close")
	}
}

// TestQueueFullAndPutWait: a full queue refuses, entries taken keep their
// place until done, and a waiting PutWait gets in once they are; the ring
// wraps in order.
func TestQueueFullAndPutWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(QueueConfig[int]{Size: 3})
		for i := range 3 {
			if r := q.Put(i, Other, 0); r != Queued {
				t.Fatalf("refused before full: %v", r)
			}
		}
		if r := q.Put(3, Other, 0); r != DropFull {
			t.Fatalf("full queue: %v", r)
		}
		done := make(chan struct{})
		go func() {
			q.PutWait(context.Background(), 9)
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("PutWait returned while the queue was full")
		default:
		}
		b, _ := q.Take(nil)
		if len(b) != 3 || b[0].Value != 0 || b[2].Value != 2 {
			t.Fatalf("took %v", b)
		}
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("PutWait got in while the entries taken were not done")
		default:
		}
		q.Done()
		<-done
		q.Done()
		q.Done()
		q.Put(10, Other, 0)
		if b, _ = q.Take(nil); len(b) != 2 || b[0].Value != 9 || b[1].Value != 10 {
			t.Fatalf("after PutWait took %v", b)
		}
		if q.Len() != 2 {
			t.Fatalf("Len %d, want the 2 taken not done", q.Len())
		}
		q.Close()
		if q.PutWait(context.Background(), 11) {
			t.Fatal("closed queue took a PutWait entry")
		}
	})
}

// TestQueueDropsUntilKeyframe: once a video frame is dropped, video frames
// are dropped until a keyframe, which carries Gap; audio is dropped only
// for want of room and does not start a drop; Resume ends a drop; each
// drop is counted by its reason.
func TestQueueDropsUntilKeyframe(t *testing.T) {
	q := NewQueue(QueueConfig[string]{Size: 2})
	put := func(v string, k Kind, want Result) {
		t.Helper()
		if r := q.Put(v, k, 0); r != want {
			t.Fatalf("put %s: %v, want %v", v, r, want)
		}
	}
	take := func(want ...string) []Entry[string] {
		t.Helper()
		b := q.Poll(nil)
		for range b {
			q.Done()
		}
		if len(b) != len(want) {
			t.Fatalf("took %v, want %v", b, want)
		}
		for i, e := range b {
			if e.Value != want[i] {
				t.Fatalf("took %v, want %v", b, want)
			}
		}
		return b
	}
	put("k1", Keyframe, Queued)
	put("a1", Other, Queued)
	put("a2", Other, DropFull) // audio: no drop of video follows
	take("k1", "a1")
	put("d1", Delta, Queued)
	put("d2", Delta, Queued)
	put("d3", Delta, DropFull) // video lost: wait for a keyframe
	take("d1", "d2")
	put("d4", Delta, DropUntilKey)
	put("a3", Other, Queued) // audio goes on
	put("d5", Delta, DropUntilKey)
	put("k2", Keyframe, Queued)
	put("d6", Delta, DropFull)
	b := take("a3", "k2")
	if b[0].Gap || !b[1].Gap {
		t.Fatalf("gaps %v %v: want only the keyframe after the drop to carry it", b[0].Gap, b[1].Gap)
	}
	put("d7", Delta, DropUntilKey)
	q.Resume() // a new run starts
	put("d8", Delta, Queued)
	put("k3", Keyframe, Queued)
	if b := take("d8", "k3"); b[0].Gap || b[1].Gap {
		t.Fatal("gap after a new run")
	}
	want := Drops{Full: 3, UntilKey: 3}
	if d := q.Drops(); d != want || d.Total() != 6 {
		t.Fatalf("drops %+v, want %+v", d, want)
	}
}

// TestQueueBytes: queues sharing a byte count drop past MaxBytes (video
// then waits for a keyframe) and give bytes back when the reader is done.
func TestQueueBytes(t *testing.T) {
	var bytes atomic.Int64
	cfg := QueueConfig[int]{Size: 100, Bytes: &bytes, MaxBytes: 1000}
	a, b := NewQueue(cfg), NewQueue(cfg)
	if r := a.Put(1, Keyframe, 600); r != Queued {
		t.Fatalf("a: %v", r)
	}
	if r := b.Put(2, Keyframe, 500); r != DropBytes {
		t.Fatalf("b past the shared bound: %v", r)
	}
	if r := b.Put(3, Delta, 100); r != DropUntilKey {
		t.Fatalf("b after its dropped keyframe: %v", r)
	}
	if r := b.Put(4, Other, 400); r != Queued {
		t.Fatalf("b audio within the bound: %v", r)
	}
	if n := bytes.Load(); n != 1000 {
		t.Fatalf("%d bytes counted, want 1000", n)
	}
	got := a.Poll(nil)
	if n := bytes.Load(); n != 1000 || len(got) != 1 {
		t.Fatalf("%d bytes counted after a take, want 1000 until done", n)
	}
	a.Done()
	if r := b.Put(5, Keyframe, 500); r != Queued {
		t.Fatalf("b after a's bytes were done: %v", r)
	}
	if e := b.Poll(nil); len(e) != 2 || !e[1].Gap || e[1].Size != 500 {
		t.Fatalf("b took %v", e)
	}
	if d := b.Drops(); d != (Drops{Bytes: 1, UntilKey: 1}) {
		t.Fatalf("b drops %+v", d)
	}
}

// TestQueueKeep: Keep copies the values queued, never those dropped.
func TestQueueKeep(t *testing.T) {
	kept := 0
	q := NewQueue(QueueConfig[*media.Unit]{Size: 1, Keep: func(u **media.Unit) {
		kept++
		*u = (*u).Clone()
	}})
	u := &media.Unit{Key: true, NALUs: [][]byte{{1, 2, 3}}}
	q.Put(u, KindOf(u, true), u.Size())
	q.Put(u, KindOf(u, true), u.Size())
	u.NALUs[0][0] = 9
	e := q.Poll(nil)
	if kept != 1 || len(e) != 1 || e[0].Value == u || e[0].Value.NALUs[0][0] != 1 {
		t.Fatalf("kept %d, took %v", kept, e)
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   bool
		video bool
		want  Kind
	}{
		{"audio", false, false, Other},
		{"delta", false, true, Delta},
		{"keyframe", true, true, Keyframe},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k := KindOf(&media.Unit{Key: tc.key}, tc.video); k != tc.want {
				t.Fatalf("%v, want %v", k, tc.want)
			}
		})
	}
}

// BenchmarkQueue: one unit through Put, Take and Done, a video frame and
// seven audio units per take; it allocates nothing.
func BenchmarkQueue(b *testing.B) {
	var bytes atomic.Int64
	q := NewQueue(QueueConfig[*media.Unit]{Size: 512, Lazy: 8, Bytes: &bytes, MaxBytes: 256 << 20})
	units := make([]media.Unit, 16)
	for i := range units {
		units[i] = media.Unit{Track: i % 2, Key: i == 0}
	}
	var buf []Entry[*media.Unit]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u := &units[i%16]
		q.Put(u, KindOf(u, u.Track == 0), 4000)
		if i%8 == 7 {
			buf, _ = q.Take(buf[:0])
			for range buf {
				q.Done()
			}
		}
	}
}
