//go:build cgo

package motion

import (
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

func TestServiceConsumer(t *testing.T) {
	sc := scene{name: "svc", length: 20 * time.Second, size: "640x360", codec: "h264", noise: 5,
		motion: []interval{{sec(8), sec(13)}}}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := sc.encode(t, base)

	var mu sync.Mutex
	var got []Event
	s := NewService(Config{Queue: len(units) + 1, Decoder: testDecoder, Publish: func(ev Event) error {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		return nil
	}})
	c := s.Consumer("cam-7")
	tr := &media.Track{Codec: media.H264}
	c.Tracks([]*media.Track{{Codec: media.AAC}, tr})
	for _, u := range units {
		u.Track = 1
		c.Unit(u)
		c.Unit(&media.Unit{Track: 0, Payload: []byte{1, 2}}) // audio is ignored
	}
	c.Close()
	s.Close()
	st := s.Stats()
	t.Logf("events %v, stats %+v", intervals(got, base), st)
	if len(got) != 1 || st.Events != 1 || st.Dropped != 0 || st.Looks == 0 || st.Decoded == 0 || st.CPU <= 0 {
		t.Fatalf("events %v, stats %+v", intervals(got, base), st)
	}
	if p, r := score(sc.motion, intervals(got, base)); p < 1 || r < 1 {
		t.Fatalf("precision %.2f recall %.2f", p, r)
	}
	if got[0].Camera != "cam-7" || len(got[0].Image) == 0 {
		t.Fatalf("event %+v", got[0])
	}
}

// TestServiceQueueFull: a detector that cannot keep up drops units (never
// blocking the caller) and counts them.
func TestServiceQueueFull(t *testing.T) {
	release := make(chan struct{})
	// The detector goroutine waits in Settings until released: the queue
	// of one fills at once.
	s := NewService(Config{Queue: 1, Decoder: testDecoder, Publish: func(Event) error { return nil },
		Settings: func(string) Settings { <-release; return DefaultSettings() }})
	c := s.Consumer("cam")
	c.Tracks([]*media.Track{{Codec: media.H264}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			c.Unit(&media.Unit{NALUs: [][]byte{{0x41, byte(i)}}, Time: time.Unix(int64(i), 0)})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Unit blocked")
	}
	close(release)
	c.Close()
	s.Close()
	if st := s.Stats(); st.Dropped != 1000 {
		t.Fatalf("%d units dropped, want all 1000 (the queue of 1 holds the tracks): %+v", st.Dropped, st)
	}
}

// TestServiceRunStartNeverLost: the start of a run that finds the queue
// full is not lost: it goes with the run's first frame queued, so the
// detector decodes the run's video with its codec.
func TestServiceRunStartNeverLost(t *testing.T) {
	sc := scene{name: "run", length: 20 * time.Second, size: "640x360", codec: "h264", noise: 5,
		motion: []interval{{sec(8), sec(13)}}}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := sc.encode(t, base)

	release := make(chan struct{})
	var mu sync.Mutex
	var got []Event
	queue := len(units) + 1
	s := NewService(Config{Queue: queue, Decoder: testDecoder, Publish: func(ev Event) error {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		return nil
	}, Settings: func(string) Settings { <-release; return DefaultSettings() }})
	c := s.Consumer("cam")
	for range queue { // runs without video fill the queue
		c.Tracks([]*media.Track{{Codec: media.AAC}})
	}
	tr := &media.Track{Codec: media.H264}
	c.Tracks([]*media.Track{tr})
	if st := s.Stats(); st.Dropped != 1 {
		t.Fatalf("%d dropped, want the last run's start", st.Dropped)
	}
	close(release)
	testenv.WaitFor(t, 10*time.Second, "the queue emptied", func() bool { return c.q.Len() == 0 })
	for _, u := range units {
		c.Unit(u)
	}
	c.Close()
	s.Close()
	if st := s.Stats(); len(got) != 1 || st.Dropped != 1 || st.Decoded == 0 {
		t.Fatalf("events %v, stats %+v: the run's video was not decoded as H.264", intervals(got, base), st)
	}
}

func TestEventID(t *testing.T) {
	a := EventID("cam-1", time.UnixMilli(1700000000123))
	b := EventID("cam-2", time.UnixMilli(1700000000123))
	if a == b || len(a) > 64 || a != EventID("cam-1", time.UnixMilli(1700000000123)) {
		t.Fatalf("ids %q %q", a, b)
	}
	for _, r := range a {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r == '-') {
			t.Fatalf("id %q has %q", a, r)
		}
	}
}
