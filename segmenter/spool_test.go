package segmenter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

func TestSpoolRecoversCrashedSegment(t *testing.T) {
	clip := makeClip(t, media.H264, 2, 25, 25, false)
	spoolDir := t.TempDir()
	ds := &dirStore{dir: t.TempDir()}

	// First run: write 5.5 s of a 60 s segment, then "crash": the writer is
	// never closed. The fragment in flight is left as it is on disk: its
	// header region not written yet (zeros), then the video of 0.5 s.
	sp1, err := NewSpool(SpoolConfig{Dir: spoolDir, Upload: ds.upload, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Minute, Spool: sp1, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks(clip.tracks()); err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	for _, u := range clip.units(25*11/2, base) {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	// The crash comes after the fragment in flight reached the file: what
	// waited in the write buffer was written, its header region not yet.
	if f := w.seg.file; f != nil {
		f.mu.Lock()
		err := f.wb.flush(f)
		f.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(spoolDir, "cam1", "*.part"))
	if len(parts) != 1 {
		t.Fatalf("want one partial spool file, got %v", parts)
	}
	b, err := os.ReadFile(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	_, fragEnd, err := scanFragments(b)
	if err != nil {
		t.Fatal(err)
	}
	if fragEnd+8 >= int64(len(b)) || !bytes.Equal(b[fragEnd:fragEnd+8], make([]byte, 8)) {
		t.Fatalf("file of %d bytes, complete fragments end at %d: want the fragment in flight after them, its header region zeros", len(b), fragEnd)
	}

	// Second run: recovery cuts the file back and uploads it.
	sp2 := newTestSpool(t, spoolDir, ds)
	drain(t, sp2)
	segs := ds.stored()
	if len(segs) != 1 {
		t.Fatalf("want the recovered segment stored, got %d", len(segs))
	}
	s := segs[0]
	if !s.Recovered || !s.Start.Equal(base) {
		t.Errorf("recovered=%v start=%v, want true and %v", s.Recovered, s.Start, base)
	}
	// Fragments of 1 s were fsynced; the one in flight (5 s to 5.5 s) is lost.
	if s.Duration != 5*time.Second || s.Frames != 125 {
		t.Errorf("recovered %v with %d frames, want 5s and 125 frames", s.Duration, s.Frames)
	}
	p := ffprobe(t, ds.path(s))
	if p.Streams[0].NbFrames != "125" || p.Frames[0].KeyFrame != 1 {
		t.Errorf("ffprobe of recovered segment: %+v", p)
	}
	left, _ := filepath.Glob(filepath.Join(spoolDir, "cam1", "*"))
	if len(left) != 0 {
		t.Errorf("spool not emptied after upload: %v", left)
	}
}

func TestSpoolRetriesUntilStorageReturns(t *testing.T) {
	clip := makeClip(t, media.H264, 2, 25, 25, false)
	ds := &dirStore{dir: t.TempDir(), fail: true}
	var failures atomic.Int64
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), Upload: ds.upload, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		OnUploadError: func(Segment, error) { failures.Add(1) }, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 2 * time.Second, Spool: sp, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks(clip.tracks()); err != nil {
		t.Fatal(err)
	}
	for _, u := range clip.units(25*8, time.UnixMilli(1_700_000_000_000)) {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	testenv.WaitFor(t, 20*time.Second, "5 failed stores", func() bool { return failures.Load() >= 5 })
	if sp.Pending() != 4 || len(ds.stored()) != 0 {
		t.Fatalf("during the outage: pending %d stored %d, want 4 and 0", sp.Pending(), len(ds.stored()))
	}
	ds.mu.Lock()
	ds.fail = false
	ds.mu.Unlock()
	drain(t, sp)
	segs := ds.stored()
	if len(segs) != 4 {
		t.Fatalf("after the outage: %d stored, want 4", len(segs))
	}
	ds.mu.Lock()
	order := append([]Segment(nil), ds.segs...)
	ds.mu.Unlock()
	for i := 1; i < len(order); i++ {
		if !order[i].Start.After(order[i-1].Start) {
			t.Errorf("upload %d out of order: %v after %v", i, order[i].Start, order[i-1].Start)
		}
	}
}

func TestSpoolQuotaDropsOldest(t *testing.T) {
	clip := makeClip(t, media.H264, 2, 25, 25, false)
	ds := &dirStore{dir: t.TempDir(), fail: true}
	var dropped []Segment
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), MaxBytes: 1, Workers: 1, Upload: ds.upload, RetryMin: time.Hour,
		OnDropped: func(s Segment, reason string) { dropped = append(dropped, s) }, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Find the size of one segment, then set the quota to hold about three.
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Second, Spool: sp, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks(clip.tracks()); err != nil {
		t.Fatal(err)
	}
	units := clip.units(25*10, time.UnixMilli(1_700_000_000_000))
	for _, u := range units {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// One segment is held by the (failing) upload; all others were dropped
	// because the quota is one byte.
	if len(dropped) < 8 {
		t.Fatalf("dropped %d segments, want at least 8 of 10", len(dropped))
	}
	for i := 1; i < len(dropped); i++ {
		if dropped[i].Start.Before(dropped[i-1].Start) {
			t.Errorf("dropped out of order: newest before oldest")
		}
	}
	files, _ := filepath.Glob(filepath.Join(sp.cfg.Dir, "cam1", "*.mp4"))
	if got := len(files); got != 10-len(dropped) {
		t.Errorf("%d files left in spool, want %d", got, 10-len(dropped))
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".part") {
			t.Errorf("partial file left: %s", f)
		}
	}
}
