package segmenter

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
)

// gapCall is one OnGap call.
type gapCall struct {
	from, to time.Time
	reason   string
}

func shift(units []*media.Unit, d time.Duration) []*media.Unit {
	for _, u := range units {
		u.DTS += d
		u.PTS += d
		u.Time = u.Time.Add(d)
	}
	return units
}

// The Writer reports every hole between its segments: after NotBefore,
// after a Discontinuity, after a timestamp jump it closed the segment for,
// and after a segment it had to close without a keyframe; never between
// chained segments.
func TestWriterReportsGaps(t *testing.T) {
	clip := makeClip(t, media.H264, 4, 25, 25, false)
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	base := time.UnixMilli(1_700_000_000_000)
	var gaps []gapCall
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 2 * time.Second, FragmentDuration: time.Second, Spool: sp,
		NotBefore: base.Add(-5 * time.Second), Log: zaptest.NewLogger(t),
		OnGap: func(from, to time.Time, reason string) { gaps = append(gaps, gapCall{from, to, reason}) }})
	if err := w.SetTracks(clip.tracks()); err != nil {
		t.Fatal(err)
	}
	write := func(units []*media.Unit) {
		for _, u := range units {
			if err := w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(clip.units(25*5, base)) // 5 s: three chained segments
	end1 := w.LastEnd()
	if len(gaps) != 1 || !gaps[0].from.Equal(base.Add(-5*time.Second)) || !gaps[0].to.Equal(base) || gaps[0].reason != "" {
		t.Fatalf("gaps after the first run %+v, want one from NotBefore to the first segment", gaps)
	}
	// A Discontinuity, and the camera resumes 10 s later.
	w.Discontinuity()
	end2 := w.LastEnd()
	if !end2.After(end1) {
		t.Fatalf("LastEnd %v after the Discontinuity, want past %v", end2, end1)
	}
	resume := base.Add(15 * time.Second)
	write(clip.units(25*2, resume))
	if len(gaps) != 2 || !gaps[1].from.Equal(end2) || !gaps[1].to.Equal(resume) || gaps[1].reason != "" {
		t.Fatalf("gaps %+v, want the second from %v to %v", gaps, end2, resume)
	}
	// The camera sends nothing for 6 s (its timestamps and the wall clock
	// jump together): the Writer closes the segment itself.
	write(shift(clip.units(25*2, resume.Add(2*time.Second)), 2*time.Second+6*time.Second))
	if len(gaps) != 3 || gaps[2].reason != GapTimestamps || gaps[2].to.Sub(gaps[2].from) < 5*time.Second {
		t.Fatalf("gaps %+v, want a third of about 6 s for timestamps", gaps)
	}
	w.Close()
}

// A segment never lasts longer than MaxDuration, even when the camera's
// keyframes are further apart: it is closed without one, video waits for
// the next keyframe, and the gap is reported as GapKeyframes.
func TestWriterMaxDuration(t *testing.T) {
	clip := makeClip(t, media.H264, 8, 25, 100, false) // a keyframe every 4 s
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	base := time.UnixMilli(1_700_000_000_000)
	var gaps []gapCall
	const maxDur = 2500 * time.Millisecond
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Second, MaxDuration: maxDur, MaxJump: 500 * time.Millisecond,
		FragmentDuration: 500 * time.Millisecond, Spool: sp, Log: zaptest.NewLogger(t),
		OnGap: func(from, to time.Time, reason string) { gaps = append(gaps, gapCall{from, to, reason}) }})
	if err := w.SetTracks(clip.tracks()); err != nil {
		t.Fatal(err)
	}
	for _, u := range clip.units(25*16, base) {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	drain(t, sp)
	segs := ds.stored()
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4 (one per keyframe, each cut short)", len(segs))
	}
	for i, s := range segs {
		if s.Duration > maxDur {
			t.Errorf("segment %d lasts %v, more than %v", i, s.Duration, maxDur)
		}
		if want := base.Add(time.Duration(i) * 4 * time.Second); !s.Start.Equal(want) {
			t.Errorf("segment %d starts at %v, want the keyframe at %v", i, s.Start, want)
		}
	}
	if len(gaps) != 4 || !gaps[0].from.IsZero() || !gaps[0].to.Equal(segs[0].Start) {
		t.Fatalf("gaps %+v, want the first segment's (from zero) and 3", gaps)
	}
	for i, g := range gaps[1:] {
		if g.reason != GapKeyframes || !g.from.Equal(segs[i].End()) || !g.to.Equal(segs[i+1].Start) {
			t.Errorf("gap %d %+v, want %v to %v for keyframes", i, g, segs[i].End(), segs[i+1].Start)
		}
	}
}

// A segment storage refuses for good (the upload's error wraps
// ErrUploadRefused) is dropped and reported, and the camera's next
// segments are stored behind it instead of waiting forever.
func TestSpoolDropsRefusedSegment(t *testing.T) {
	clip := makeClip(t, media.H264, 2, 25, 25, false)
	ds := &dirStore{dir: t.TempDir()}
	base := time.UnixMilli(1_700_000_000_000)
	refuse := base.UnixMilli() + 2000 // the second segment
	var mu sync.Mutex
	var dropped []string
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Log: zaptest.NewLogger(t),
		Upload: func(ctx context.Context, seg Segment, body io.ReadSeeker) error {
			if seg.StartMs() == refuse {
				return fmt.Errorf("put: %w", ErrUploadRefused)
			}
			return ds.upload(ctx, seg, body)
		},
		OnDropped: func(seg Segment, reason string) {
			mu.Lock()
			dropped = append(dropped, fmt.Sprint(seg.StartMs(), reason))
			mu.Unlock()
		}})
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
	for _, u := range clip.units(25*6, base) {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	drain(t, sp)
	if got := len(ds.stored()); got != 2 {
		t.Errorf("%d segments stored, want 2 (the first and the third)", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dropped) != 1 || dropped[0] != fmt.Sprint(refuse, "upload_failed") {
		t.Errorf("dropped %v, want the second segment for upload_failed", dropped)
	}
	if n, err := os.ReadDir(filepath.Join(sp.cfg.Dir, "cam1")); err != nil || len(n) != 0 {
		t.Errorf("spool still holds %d files (%v)", len(n), err)
	}
}
