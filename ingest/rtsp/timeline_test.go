package rtsp

import "testing"

// TestUnwrapperAbsorbsJumps: RTP timestamps of a stream with B-frames, in
// decoding order (presentation times going back and forth by up to three
// frames), wrapping past 2^32 and then jumping back an hour and forward a
// day, come out as a count of ticks that keeps the order and spacing of
// the frames: the wrap is invisible and each jump costs at most a frame.
func TestUnwrapperAbsorbsJumps(t *testing.T) {
	const frame = 6000 // 15 fps at 90 kHz
	// Presentation order offsets of a mini-GOP in decoding order: P, B, B, B.
	pattern := []int64{3, 1, 0, 2}
	jumps := map[int]int64{100: -3600 * 90000, 200: 24 * 3600 * 90000}
	start := uint32(1<<32 - 50*frame) // wraps after 50 frames
	var u *unwrapper
	var off int64
	var prev int64
	for i := range 300 {
		if j, ok := jumps[i]; ok {
			off += j
		}
		pts := int64(i/4*4)*frame + pattern[i%4]*frame
		ts := uint32(int64(start) + pts + off)
		var got int64
		if u == nil {
			u = newUnwrapper(ts, 0, 90000)
		} else {
			got = u.next(ts)
		}
		if i > 0 {
			want := pts - (int64((i-1)/4*4)*frame + pattern[(i-1)%4]*frame)
			if _, jumped := jumps[i]; jumped {
				if d := got - prev; d <= 0 || d > 4*frame {
					t.Fatalf("frame %d (a jump): step %d ticks, want one to four frames", i, d)
				}
			} else if d := got - prev; d != want {
				t.Fatalf("frame %d: step %d ticks, want %d", i, d, want)
			}
		}
		prev = got
	}
}
