package rtsp

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
)

// bframeUnits reads testdata/bframes_resize.h264: 30 frames of 64x64 then
// 30 of 48x48 (a new SPS at frame 30), H.264 High with 3 B-frames and a
// keyframe every 15 frames, with the SPS and PPS before every keyframe, as
// access units in decoding order, and the presentation frame number of
// each (bframes_resize.pts).
func bframeUnits(t *testing.T) (aus [][][]byte, pts []int) {
	t.Helper()
	b, err := os.ReadFile("testdata/bframes_resize.h264")
	if err != nil {
		t.Fatal(err)
	}
	// NAL units between start codes (00 00 01, the longer 00 00 00 01
	// leaves a zero at the end of the unit before).
	var nalus [][]byte
	for _, n := range bytes.Split(b, []byte{0, 0, 1})[1:] {
		nalus = append(nalus, bytes.TrimRight(n, "\x00"))
	}
	for _, n := range nalus {
		if h264.NALUType(n[0]&0x1f) == h264.NALUTypeAccessUnitDelimiter {
			aus = append(aus, nil)
			continue
		}
		aus[len(aus)-1] = append(aus[len(aus)-1], n)
	}
	p, err := os.ReadFile("testdata/bframes_resize.pts")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(p)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pts = append(pts, n)
	}
	if len(aus) != 60 || len(pts) != 60 {
		t.Fatalf("%d access units, %d presentation times, want 60", len(aus), len(pts))
	}
	return aus, pts
}

// TestDecodingTimesAcrossRestarts: the DTS extractor starts afresh after a
// loss and at a new SPS; the decoding times handed on go on a frame apart
// all the same, as they would without the restart. Before, the keyframe of
// a restart jumped ahead by the reorder delay (2 frames) and the next
// frames followed 1 ms apart: segments started late, their first frames
// flashed by, and the session's clock took the jump for a wrong rate.
func TestDecodingTimesAcrossRestarts(t *testing.T) {
	aus, pts := bframeUnits(t)
	const frame = 6000 // 90 kHz ticks at 15 fps
	for _, tc := range []struct {
		name string
		lose int // the decoding-order index of an access unit lost, -1 for none
	}{
		{"new sps", -1},
		{"loss", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &unitSink{}
			r, _ := videoReader(t, &format.H264{PayloadTyp: 96, PacketizationMode: 1}, sink, bytes.NewReader(nil))
			enc := &rtph264.Encoder{PayloadType: 96, PacketizationMode: 1}
			if err := enc.Init(); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			for i, au := range aus {
				pkts, err := enc.Encode(au)
				if err != nil {
					t.Fatal(err)
				}
				for j, p := range pkts {
					if i == tc.lose && j == 0 {
						continue
					}
					// Three frames of latency: B-frames arrive before
					// they are presented.
					p.Timestamp = uint32(pts[i] * frame)
					b, _ := p.Marshal()
					rp, err := parseRTP(b)
					if err != nil {
						t.Fatal(err)
					}
					r.handlers[0].packet(&rp, now.Add(time.Duration(i+3)*time.Second/15))
				}
			}
			units := sink.byTrack(0)
			// After the session's own start (the extractor learning the
			// delay over the first frames), each decoding time is a frame
			// after the one before, or after a loss a whole number of frames
			// (the units after it up to the keyframe are dropped).
			start := 15
			for i := start + 1; i < len(units); i++ {
				step := units[i].DTS - units[i-1].DTS
				frames := step.Seconds() * 15
				if d := frames - float64(int(frames+0.5)); d > 0.01 || d < -0.01 || frames < 0.99 || (tc.lose < 0 && frames > 1.01) {
					t.Errorf("unit %d: decoding time %v after the one before (%.2f frames)", i, step, frames)
				}
				if units[i].DTS > units[i].PTS {
					t.Errorf("unit %d: decoded at %v, after its presentation at %v", i, units[i].DTS, units[i].PTS)
				}
			}
			if tc.lose >= 0 && len(units) > 50 {
				t.Errorf("%d units delivered: nothing lost", len(units))
			}
		})
	}
}
