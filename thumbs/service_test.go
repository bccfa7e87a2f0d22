//go:build cgo

package thumbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// memStore keeps stored images in memory.
type memStore struct {
	mu    sync.Mutex
	calls int
	keys  map[string][]byte
	gate  chan struct{} // when set, Store waits for it
}

func (m *memStore) store(ctx context.Context, kind Kind, camera string, t time.Time, img []byte) (string, error) {
	if m.gate != nil {
		select {
		case <-m.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.keys == nil {
		m.keys = map[string][]byte{}
	}
	key := fmt.Sprintf("%s/%s/%d", kind, camera, t.UnixMilli())
	m.keys[key] = img
	return key, nil
}

func feed(t *testing.T, c *Consumer, codec string, base time.Time, frames int) {
	t.Helper()
	clip, err := synth.Fixture(codec, true)
	if err != nil {
		t.Fatal(err)
	}
	tr := clip.Track()
	c.Tracks([]*media.Track{&tr})
	for i := 0; i < frames; i++ {
		u := clip.Units[i%len(clip.Units)]
		u.PTS = time.Duration(i) * time.Second / 15
		u.Time = base.Add(u.PTS)
		c.Unit(&u)
	}
}

func TestSnapshotLatest(t *testing.T) {
	st := &memStore{}
	s := New(Config{Store: st.store, Decoder: testDecoder(t)})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Snapshot(ctx, "cam"); !errors.Is(err, ErrNoKeyframe) {
		t.Fatalf("unknown camera: %v", err)
	}
	c := s.Consumer("cam")
	if !s.Recording("cam") {
		t.Fatal("camera not known after Consumer")
	}
	if _, err := s.Snapshot(ctx, "cam"); !errors.Is(err, ErrNoKeyframe) {
		t.Fatalf("before a keyframe: %v", err)
	}
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	feed(t, c, synth.CodecH265, base, 45) // keyframes at 0 s and 2 s
	snap, err := s.Snapshot(ctx, "cam")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Time.Equal(base.Add(2*time.Second)) || snap.Width != 640 || snap.Height != 360 {
		t.Fatalf("snapshot %s %dx%d, want the keyframe at +2 s, 640x360", snap.Time, snap.Width, snap.Height)
	}
	img, err := jpeg.Decode(bytes.NewReader(st.keys[snap.Key]))
	if err != nil || img.Bounds().Dx() != 640 {
		t.Fatalf("stored snapshot: %v", err)
	}
	again, err := s.Snapshot(ctx, "cam")
	if err != nil || again.Key != snap.Key {
		t.Fatalf("second snapshot %v %v", again.Key, err)
	}
	// The minute and hourly thumbnails of the first keyframe are stored by
	// the worker, asynchronously: wait for them, then check nothing more.
	const want = 1 + 1 + 1 // minute + hourly of the first keyframe, one snapshot
	storeCalls := func() int {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.calls
	}
	deadline := time.Now().Add(10 * time.Second)
	for storeCalls() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if calls := storeCalls(); calls != want {
		t.Fatalf("%d Store calls, want %d", calls, want)
	}
	c.Close()
	if s.Recording("cam") {
		t.Fatal("camera still known after Close")
	}
}

// TestQueueDropsNeverBlocks: with the worker stuck in Store, the consumer
// keeps returning and the thumbnails past the queue are dropped and counted.
func TestQueueDropsNeverBlocks(t *testing.T) {
	st := &memStore{gate: make(chan struct{})}
	s := New(Config{Store: st.store, Queue: 2, Workers: 1, Interval: 2 * time.Second, Decoder: testDecoder(t)})
	c := s.Consumer("cam")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// 20 keyframes, each in its own 2 s interval.
		feed(t, c, synth.CodecH264, time.Unix(1700000000, 0), 20*30)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Unit blocked")
	}
	stats := s.Stats()
	if stats.Dropped < 15 {
		t.Fatalf("dropped %d thumbnails, want at least 15 of 20 (queue 2, worker stuck)", stats.Dropped)
	}
	close(st.gate)
	deadline := time.Now().Add(30 * time.Second)
	// Every thumbnail not dropped is stored once the worker is free.
	for cur := s.Stats(); cur.Minute+cur.Dropped < 20 && time.Now().Before(deadline); cur = s.Stats() {
		time.Sleep(20 * time.Millisecond)
	}
	c.Close()
	s.Close()
	got := s.Stats()
	t.Logf("stats %+v", got)
	if got.Minute == 0 || got.Minute+got.Dropped > 20 {
		t.Fatalf("stats %+v", got)
	}
}

func TestFrameAtBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"garbage", []byte("not an mp4 file at all, just bytes")},
		{"truncated box", []byte{0, 0, 0, 100, 'f', 't', 'y', 'p', 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := FrameAt(context.Background(), testDecoder(t), tc.data, time.Unix(0, 0), time.Unix(1, 0), 0)
			if !errors.Is(err, ErrBadSegment) {
				t.Fatalf("got %v, want ErrBadSegment", err)
			}
		})
	}
}

func FuzzBoxOffset(f *testing.F) {
	f.Add([]byte{0, 0, 0, 8, 'f', 't', 'y', 'p', 0, 0, 0, 8, 'm', 'o', 'o', 'f'})
	f.Add([]byte{0, 0, 0, 1, 'f', 't', 'y', 'p', 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 8, 'm', 'o', 'o', 'f'})
	f.Add([]byte{0, 0, 0, 0, 'm', 'd', 'a', 't'})
	f.Add([]byte{0, 0, 0, 3, 'x', 'x', 'x', 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		off := boxOffset(data, "moof")
		if off >= 0 && (off+8 > len(data) || string(data[off+4:off+8]) != "moof") {
			t.Fatalf("offset %d does not point at a moof box", off)
		}
	})
}
