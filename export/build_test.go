package export

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
)

// t0 is a recording start a minute before an hour boundary, so the
// segments of the test span two hour prefixes.
var t0 = time.Date(2026, 3, 10, 11, 59, 0, 0, time.UTC)

// TestExportAcrossSegmentsWithGap exports 5 minutes across 6 segments with
// a 20 s gap inside and checks the file with ffprobe.
func TestExportAcrossSegmentsWithGap(t *testing.T) {
	for _, codec := range []string{"h264", "h265"} {
		t.Run(codec, func(t *testing.T) {
			st := newFS(t)
			// Run 1: 3 segments of 60 s; 20 s without recording; run 2: 3 more.
			record(t, st, "7", codec, true, 60*time.Second,
				recRun{t0, 180 * time.Second}, recRun{t0.Add(200 * time.Second), 180 * time.Second})
			segs, err := FindSegments(context.Background(), catalogue.New(catalogue.Config{Store: st}), "7", t0, t0.Add(time.Hour))
			if err != nil || len(segs) != 6 {
				t.Fatalf("recorded %d segments (%v), want 6", len(segs), err)
			}

			start, end := t0.Add(50500*time.Millisecond), t0.Add(350500*time.Millisecond)
			var calls int
			var last [2]int64
			c, err := Build(context.Background(), st, Request{Camera: "7", Start: start, End: end}, Options{
				Progress: func(done, total int64) { calls++; last = [2]int64{done, total} },
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Segments != 6 {
				t.Errorf("segments read %d, want 6", c.Segments)
			}
			if calls != 6 || last[0] != last[1] {
				t.Errorf("progress: %d calls, last %v", calls, last)
			}
			if len(c.Gaps) != 1 || c.Gaps[0].To.Sub(c.Gaps[0].From) < 19*time.Second || c.Gaps[0].To.Sub(c.Gaps[0].From) > 21*time.Second {
				t.Errorf("gaps %+v, want one of 20 s", c.Gaps)
			}
			// The keyframe at or before the start: GOP is 2 s from t0.
			if c.Start.After(start) || start.Sub(c.Start) > 2*time.Second {
				t.Errorf("clip starts at %v, want the keyframe at or before %v", c.Start, start)
			}
			if c.Keyframe == nil || len(c.Keyframe.NALUs) == 0 || len(c.Keyframe.SPS) == 0 {
				t.Errorf("no first keyframe kept for the thumbnail: %+v", c.Keyframe)
			}

			path := writeClip(t, c)
			boxes := topLevel(t, path)
			if i, j := slices.Index(boxes, "moov"), slices.Index(boxes, "mdat"); i < 0 || j < 0 || i > j {
				t.Fatalf("top-level boxes %v: want moov before mdat", boxes)
			}
			if slices.Contains(boxes, "moof") {
				t.Errorf("top-level boxes %v: the file is fragmented", boxes)
			}

			p := ffprobe(t, path, "-count_packets", "-show_streams", "-show_format")
			wantDur := end.Sub(start) // gaps stay in the timeline
			gotDur := seconds(t, p.Format.Duration)
			if d := gotDur - wantDur; d < -100*time.Millisecond || d > 2*time.Second+100*time.Millisecond {
				t.Errorf("duration %v, want %v to %v + one GOP (2 s)", gotDur, wantDur, wantDur)
			}
			var kinds []string
			for _, s := range p.Streams {
				kinds = append(kinds, s.CodecType+":"+s.CodecName)
			}
			wantCodec := map[string]string{"h264": "video:h264", "h265": "video:hevc"}[codec]
			if !slices.Contains(kinds, wantCodec) || !slices.Contains(kinds, "audio:aac") {
				t.Errorf("streams %v, want %s and audio:aac", kinds, wantCodec)
			}
			for _, s := range p.Streams {
				if s.CodecType != "video" {
					continue
				}
				n, _ := strconv.Atoi(s.NbFrames)
				// 15 fps over the clip, without the 20 s gap (packets, not decoded).
				want := int((gotDur - 20*time.Second).Seconds() * 15)
				if n < want-20 || n > want+20 {
					t.Errorf("%d video frames decoded, want about %d", n, want)
				}
				if s.Width != 640 || s.Height != 360 {
					t.Errorf("size %dx%d", s.Width, s.Height)
				}
			}
			first := ffprobe(t, path, "-select_streams", "v:0", "-show_entries", "frame=key_frame,pict_type", "-read_intervals", "%+#1")
			if len(first.Frames) == 0 || first.Frames[0].KeyFrame != 1 {
				t.Errorf("first frame %+v, want a keyframe", first.Frames)
			}
		})
	}
}

func TestExportNoRecordings(t *testing.T) {
	st := newFS(t)
	record(t, st, "7", "h264", false, 10*time.Second, recRun{t0, 20 * time.Second})
	_, err := Build(context.Background(), st, Request{Camera: "7", Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour)}, Options{})
	if !errors.Is(err, ErrNoRecordings) {
		t.Fatalf("err %v, want ErrNoRecordings", err)
	}
	_, err = Build(context.Background(), st, Request{Camera: "7", Start: t0, End: t0.Add(25 * time.Hour)}, Options{})
	if !errors.Is(err, ErrRange) {
		t.Fatalf("err %v, want ErrRange for 25 h", err)
	}
}
