//go:build cgo

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/motion"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
)

// movingObjectUnits encodes 16 s of a still scene with an object moving
// from 6 s to 11 s, and returns its access units timed from base.
func movingObjectUnits(t *testing.T, base time.Time) []*media.Unit {
	t.Helper()
	out := filepath.Join(t.TempDir(), "clip.h264")
	graph := "smptehdbars=s=640x360:r=15,format=yuv420p[bg];testsrc2=s=48x80:r=15,format=yuv420p[obj];" +
		"[bg][obj]overlay=x='40+(t-6)*100':y=140:enable='between(t,6,11)',noise=alls=5:allf=t"
	cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", graph,
		"-t", "16", "-g", "30", "-bf", "0", "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-crf", "28",
		"-x264-params", "keyint=30:min-keyint=30:scenecut=0:repeat-headers=1", "-bsf:v", "h264_metadata=aud=insert", "-f", "h264", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var units []*media.Unit
	for _, nalu := range bytes.Split(data, []byte{0, 0, 0, 1}) {
		for _, n := range bytes.Split(nalu, []byte{0, 0, 1}) {
			n = bytes.TrimRight(n, "\x00")
			if len(n) == 0 {
				continue
			}
			switch n[0] & 0x1f {
			case 9: // access unit delimiter
				units = append(units, &media.Unit{})
				continue
			case 5:
				units[len(units)-1].Key = true
			}
			if len(units) > 0 {
				units[len(units)-1].NALUs = append(units[len(units)-1].NALUs, n)
			}
		}
	}
	for i, u := range units {
		u.PTS = time.Duration(i) * time.Second / 15
		u.DTS = u.PTS
		u.Time = base.Add(u.PTS)
	}
	return units
}

// TestMotionEventPublished runs the motion wiring on a real embedded NATS:
// a moving object gives one type 5 event on vigia.events.{camera}.5, its
// image stored at events/{camera}/{id}.jpg; publishing it again is
// deduplicated by its Nats-Msg-Id.
func TestMotionEventPublished(t *testing.T) {
	a := thumbsApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0"}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.bus = b
	a.outbox = bus.NewOutbox(b, 0, zap.NewNop())
	defer a.outbox.Close()

	factory := a.startMotion()
	if factory == nil {
		t.Fatal("no motion consumer")
	}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := movingObjectUnits(t, base)
	c := factory("cam-9")
	c.Tracks([]*media.Track{{Codec: media.H264}})
	for _, u := range units { // 240 units: the queue of 256 holds them all
		c.Unit(u)
	}
	c.Close()
	if st := a.motion.Stats(); st.Events != 1 || st.Dropped != 0 {
		t.Fatalf("motion stats %+v, want one event", st)
	}

	// Publish the same event again, then a sentinel: the stream holds the
	// motion event once.
	var mu sync.Mutex
	var seen []bus.Event
	var raw []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.ConsumeEvents(ctx, "test", func(_ context.Context, e bus.Event) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, e)
			if e.ID == "sentinel" {
				cancel()
			}
			return nil
		})
	}()
	testenv.WaitFor(t, 20*time.Second, "the motion event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0
	})
	mu.Lock()
	ev := seen[0]
	mu.Unlock()
	raw, _ = json.Marshal(motionMessage{Event: ev})
	if err := a.outbox.Enqueue(bus.EventSubject(ev.Camera, motion.EventType), raw, ev.ID); err != nil {
		t.Fatal(err)
	}
	sentinel, _ := json.Marshal(bus.Event{ID: "sentinel", Camera: "cam-9", Type: 1, AtMs: 1})
	if err := a.outbox.Enqueue(bus.EventSubject("cam-9", 1), sentinel, "sentinel"); err != nil {
		t.Fatal(err)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[1].ID != "sentinel" {
		t.Fatalf("events in the stream: %+v, want the motion event once then the sentinel", seen)
	}
	start := time.UnixMilli(ev.AtMs).Sub(base)
	t.Logf("event %+v (starts %.1f s into the clip; motion from 6 s to 11 s)", ev, start.Seconds())
	if ev.Type != 5 || ev.Camera != "cam-9" || ev.ID != motion.EventID("cam-9", time.UnixMilli(ev.AtMs)) ||
		start < 5*time.Second || start > 8*time.Second {
		t.Fatalf("event %+v", ev)
	}
	if ev.ImageKey != storage.EventImageKey("cam-9", ev.ID) {
		t.Fatalf("image key %q", ev.ImageKey)
	}
	if _, err := jpeg.Decode(bytes.NewReader(getObject(t, a.store, ev.ImageKey))); err != nil {
		t.Fatalf("event image: %v", err)
	}
}
