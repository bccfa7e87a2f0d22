package segmenter

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
)

// dirStore is an upload target in a folder, for tests.
type dirStore struct {
	dir  string
	mu   sync.Mutex
	segs []Segment
	fail bool
}

func (d *dirStore) upload(_ context.Context, seg Segment, body io.ReadSeeker) error {
	d.mu.Lock()
	fail := d.fail
	d.mu.Unlock()
	if fail {
		return io.ErrUnexpectedEOF
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if int64(len(b)) != seg.Size {
		return io.ErrShortWrite
	}
	name := seg.Camera + "_" + strconv.FormatInt(seg.StartMs(), 10) + "_" + strconv.FormatInt(seg.DurationMs(), 10) + ".mp4"
	if err := os.WriteFile(filepath.Join(d.dir, name), b, 0o644); err != nil {
		return err
	}
	d.mu.Lock()
	d.segs = append(d.segs, seg)
	d.mu.Unlock()
	return nil
}

func (d *dirStore) stored() []Segment {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := append([]Segment(nil), d.segs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

func (d *dirStore) path(seg Segment) string {
	return filepath.Join(d.dir, seg.Camera+"_"+strconv.FormatInt(seg.StartMs(), 10)+"_"+strconv.FormatInt(seg.DurationMs(), 10)+".mp4")
}

func newTestSpool(t testing.TB, dir string, ds *dirStore) *Spool {
	t.Helper()
	sp, err := NewSpool(SpoolConfig{Dir: dir, Upload: ds.upload, RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.Close)
	return sp
}

func drain(t testing.TB, sp *Spool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sp.Drain(ctx); err != nil {
		t.Fatalf("spool did not drain: %v", err)
	}
}

// probe is what ffprobe says of a file.
type probe struct {
	Streams []struct {
		CodecName string `json:"codec_name"`
		CodecType string `json:"codec_type"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		NbFrames  string `json:"nb_read_frames"`
		Duration  string `json:"duration"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
	Frames []struct {
		KeyFrame int    `json:"key_frame"`
		PictType string `json:"pict_type"`
	} `json:"frames"`
}

func ffprobe(t *testing.T, path string) probe {
	t.Helper()
	var p probe
	for _, args := range [][]string{
		{"-count_frames", "-show_streams", "-show_format", "-select_streams", "v:0"},
		{"-select_streams", "v:0", "-show_entries", "frame=key_frame,pict_type", "-read_intervals", "%+#1"},
	} {
		args = append(append([]string{"-v", "error"}, args...), "-of", "json", path)
		out, err := exec.Command("ffprobe", args...).Output()
		if err != nil {
			t.Fatalf("ffprobe %s: %v", path, err)
		}
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestWriterSegments(t *testing.T) {
	cases := []struct {
		name  string
		codec media.Codec
		audio bool
	}{
		{"h264", media.H264, false},
		{"h264_aac", media.H264, true},
		{"h265", media.H265, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clip := makeClip(t, tc.codec, 4, 25, 25, tc.audio)
			ds := &dirStore{dir: t.TempDir()}
			sp := newTestSpool(t, t.TempDir(), ds)
			w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 3 * time.Second, FragmentDuration: time.Second, Spool: sp, Log: zaptest.NewLogger(t)})
			if err := w.SetTracks(clip.tracks()); err != nil {
				t.Fatal(err)
			}
			base := time.UnixMilli(1_700_000_000_000)
			for _, u := range clip.units(25*10, base) { // 10 s
				if err := w.WriteUnit(u); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			drain(t, sp)
			segs := ds.stored()
			if len(segs) != 4 {
				t.Fatalf("got %d segments, want 4 (10 s cut at the keyframes at 3, 6 and 9 s)", len(segs))
			}
			frame := 40 * time.Millisecond
			for i, s := range segs {
				if i > 0 {
					gap := s.Start.Sub(segs[i-1].End())
					if gap < -time.Millisecond || gap > frame {
						t.Errorf("segment %d: gap %v after previous", i, gap)
					}
				}
				// ffprobe reads the written-through layout: free boxes between
				// moof and mdat.
				b, err := os.ReadFile(ds.path(s))
				if err != nil {
					t.Fatal(err)
				}
				free := 0
				_, frags := layout(t, b)
				for _, f := range frags {
					if f.free > 0 {
						free++
					}
				}
				if free == 0 {
					t.Errorf("segment %d: no free box in %d fragments", i, len(frags))
				}
				p := ffprobe(t, ds.path(s))
				if len(p.Streams) != 1 || p.Streams[0].CodecName != map[media.Codec]string{media.H264: "h264", media.H265: "hevc"}[tc.codec] {
					t.Fatalf("segment %d: streams %+v", i, p.Streams)
				}
				if p.Streams[0].Width != 320 || p.Streams[0].Height != 240 || s.Width != 320 || s.Height != 240 {
					t.Errorf("segment %d: size %dx%d (meta %dx%d)", i, p.Streams[0].Width, p.Streams[0].Height, s.Width, s.Height)
				}
				if len(p.Frames) == 0 || p.Frames[0].KeyFrame != 1 {
					t.Errorf("segment %d: first frame not a keyframe: %+v", i, p.Frames)
				}
				d, _ := strconv.ParseFloat(p.Streams[0].Duration, 64)
				if math.Abs(d*1000-float64(s.DurationMs())) > float64(frame.Milliseconds()) {
					t.Errorf("segment %d: ffprobe video duration %.3f s, key says %d ms", i, d, s.DurationMs())
				}
				if n, _ := strconv.Atoi(p.Streams[0].NbFrames); n != s.Frames {
					t.Errorf("segment %d: %d frames read, %d written", i, n, s.Frames)
				}
			}
			if first := segs[0].Start; !first.Equal(base) {
				t.Errorf("first segment starts at %v, want %v", first, base)
			}
			total := segs[3].End().Sub(segs[0].Start)
			if total != 10*time.Second {
				t.Errorf("segments cover %v, want 10s", total)
			}
			if tc.audio {
				out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", ds.path(segs[1])).Output()
				if err != nil || string(out) != "aac\n" {
					t.Errorf("audio stream: %q %v", out, err)
				}
			}
		})
	}
}

// A camera stopped and started again on the node gets a new Writer whose
// first frame may carry a wall-clock time before the end of the last run's
// segment (that run's anchor was taken late): with NotBefore, the new
// segment starts at that end, not before it.
func TestWriterNotBeforeAcrossWriters(t *testing.T) {
	clip := makeClip(t, media.H264, 4, 25, 25, false)
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	base := time.UnixMilli(1_700_000_000_000)
	run := func(notBefore, at time.Time) time.Time {
		w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 3 * time.Second, FragmentDuration: time.Second, Spool: sp, NotBefore: notBefore, Log: zaptest.NewLogger(t)})
		if err := w.SetTracks(clip.tracks()); err != nil {
			t.Fatal(err)
		}
		for _, u := range clip.units(25*2, at) { // 2 s
			if err := w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		return w.LastEnd()
	}
	end := run(time.Time{}, base)
	if want := base.Add(2 * time.Second); end.Before(want.Add(-40*time.Millisecond)) || end.After(want) {
		t.Fatalf("first run ends at %v, want about %v", end, want)
	}
	// The second run's first frame is stamped 75 ms before the first run's end.
	end2 := run(end, end.Add(-75*time.Millisecond))
	drain(t, sp)
	segs := ds.stored()
	if len(segs) != 2 {
		t.Fatalf("got %d segments, want 2", len(segs))
	}
	if !segs[1].Start.Equal(segs[0].End()) {
		t.Errorf("second run starts at %v, first ended at %v: want the second to start at the first's end", segs[1].Start, segs[0].End())
	}
	if !end2.Equal(segs[1].End()) {
		t.Errorf("LastEnd %v, last segment ends %v", end2, segs[1].End())
	}
	// Without NotBefore the second run would have overlapped: the check
	// above can fail.
	if !end.Add(-75 * time.Millisecond).Before(segs[0].End()) {
		t.Fatal("test setup: the second run's stamp is not before the first's end")
	}
}

// A camera whose segment reaches WriterConfig.MaxBytes is cut at its next
// keyframe, long before SegmentDuration: no segment grows past the bound
// by more than a GOP, and the segments still cover the whole stream.
func TestWriterMaxBytes(t *testing.T) {
	clip := makeClip(t, media.H264, 4, 25, 25, false)
	record := func(maxBytes int64) []Segment {
		ds := &dirStore{dir: t.TempDir()}
		sp := newTestSpool(t, t.TempDir(), ds)
		w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 60 * time.Second, MaxBytes: maxBytes, Spool: sp, Log: zaptest.NewLogger(t)})
		if err := w.SetTracks(clip.tracks()); err != nil {
			t.Fatal(err)
		}
		for _, u := range clip.units(25*10, time.UnixMilli(1_700_000_000_000)) { // 10 s, a keyframe a second
			if err := w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		drain(t, sp)
		return ds.stored()
	}
	whole := record(0)
	if len(whole) != 1 {
		t.Fatalf("without a bound: %d segments, want 1", len(whole))
	}
	limit := whole[0].Size / 5
	segs := record(limit)
	if len(segs) < 4 {
		t.Fatalf("bound %d bytes of a %d-byte stream: %d segments, want at least 4", limit, whole[0].Size, len(segs))
	}
	var total time.Duration
	for i, s := range segs {
		if s.Size > 2*limit {
			t.Errorf("segment %d: %d bytes, bound %d", i, s.Size, limit)
		}
		total += s.Duration
	}
	if total != 10*time.Second {
		t.Errorf("segments cover %v, want 10s", total)
	}
}
