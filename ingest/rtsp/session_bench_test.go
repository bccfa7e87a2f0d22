package rtsp

import (
	"bytes"
	"io"
	"testing"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// BenchmarkReadLoop measures the TCP read path of one camera without the
// network: the interleaved RTP of the 720p synthetic clip (15 fps, GOP 2 s,
// about 2 Mbit/s) parsed, depacketized, checked and timed into units. One
// op is one video frame; at 15 fps, ns/op × 15 / 10⁷ is the read path's
// share of one core per camera, socket reads and the pipeline excluded.
// Units are released at once, as the pipeline does after writing them.
func BenchmarkReadLoop(b *testing.B) {
	defer media.SetPoisonReleased(media.SetPoisonReleased(false))
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		b.Run(codec, func(b *testing.B) {
			clip, err := synth.Fixture(codec, false)
			if err != nil {
				b.Fatal(err)
			}
			var enc func([][]byte) ([]*rtp.Packet, error)
			var f format.Format
			if codec == synth.CodecH265 {
				e := &rtph265.Encoder{PayloadType: 96}
				if err := e.Init(); err != nil {
					b.Fatal(err)
				}
				enc, f = e.Encode, &format.H265{PayloadTyp: 96}
			} else {
				e := &rtph264.Encoder{PayloadType: 96, PacketizationMode: 1}
				if err := e.Init(); err != nil {
					b.Fatal(err)
				}
				enc, f = e.Encode, &format.H264{PayloadTyp: 96, PacketizationMode: 1}
			}
			// The clip, looped to cover b.N frames, as one byte stream.
			var loop []byte
			for i, u := range clip.Units {
				pkts, err := enc(u.NALUs)
				if err != nil {
					b.Fatal(err)
				}
				for _, p := range pkts {
					p.Timestamp = uint32(i * 6000)
					pb, _ := p.Marshal()
					fr, _ := base.InterleavedFrame{Channel: 0, Payload: pb}.Marshal()
					loop = append(loop, fr...)
				}
			}
			r, s := videoReader(b, f, releaseSink{}, &loopReader{data: loop, frames: b.N, perLoop: len(clip.Units)})
			ps := &playState{stats: make([]rtpStats, 1)}
			b.SetBytes(int64(len(loop) / len(clip.Units)))
			b.ReportAllocs()
			b.ResetTimer()
			if err := s.readLoop(r, []int{0}, ps); err != io.EOF {
				b.Fatal(err)
			}
		})
	}
}

// releaseSink gives every unit's memory back at once, as the pipeline
// does once a unit is written.
type releaseSink struct{}

func (releaseSink) Tracks([]*media.Track) error { return nil }
func (releaseSink) Unit(u *media.Unit)          { u.Release() }

// loopReader serves data over and over, frames frames in all (perLoop
// frames a loop), then io.EOF.
type loopReader struct {
	data    []byte
	frames  int
	perLoop int
	r       *bytes.Reader
}

func (l *loopReader) Read(p []byte) (int, error) {
	if l.r == nil || l.r.Len() == 0 {
		if l.frames <= 0 {
			return 0, io.EOF
		}
		l.frames -= l.perLoop
		l.r = bytes.NewReader(l.data)
	}
	return l.r.Read(p)
}
