package rtsp

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/synth"
)

// TestAACFragmentsOverTCP: AAC access units split over several RTP packets
// (RFC 3640 fragmentation, as a server packetizes large or high-bitrate
// frames), interleaved on the RTSP connection with video packets, come out
// of the TCP read loop byte for byte: the fragments are not kept in the
// read buffer, which is refilled before an access unit's last packet.
func TestAACFragmentsOverTCP(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	aac := &format.MPEG4Audio{PayloadTyp: 97, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3,
		Config: &mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 16000, ChannelCount: 1}}
	desc := &description.Session{Medias: []*description.Media{
		{Type: description.MediaTypeVideo, Formats: []format.Format{&format.H264{PayloadTyp: 96, PacketizationMode: 1}}},
		{Type: description.MediaTypeAudio, Formats: []format.Format{aac}},
	}}
	venc := &rtph264.Encoder{PayloadType: 96, PacketizationMode: 1, PayloadMaxSize: 1000}
	aenc := &rtpmpeg4audio.Encoder{PayloadType: 97, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3, PayloadMaxSize: 400}
	if err := venc.Init(); err != nil {
		t.Fatal(err)
	}
	if err := aenc.Init(); err != nil {
		t.Fatal(err)
	}
	frame := func(ch int, p *rtp.Packet) []byte {
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		fr, err := base.InterleavedFrame{Channel: ch, Payload: b}.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return fr
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var stream []byte
	var want [][]byte
	for i := range 60 {
		vp, err := venc.Encode(clip.Units[i%len(clip.Units)].NALUs)
		if err != nil {
			t.Fatal(err)
		}
		// Audio from the second video frame on: the first one starts the
		// time axis once its last packet is in.
		var ap []*rtp.Packet
		if i > 0 {
			au := make([]byte, 1200+rng.IntN(800)) // 4 to 6 packets of 400 bytes
			for j := range au {
				au[j] = byte(rng.Uint32())
			}
			want = append(want, au)
			if ap, err = aenc.Encode([][]byte{au}); err != nil {
				t.Fatal(err)
			}
			if len(ap) < 2 {
				t.Fatalf("access unit %d in %d packet", i, len(ap))
			}
		}
		// Video packets between the fragments of each access unit.
		for j := range max(len(vp), len(ap)) {
			if j < len(vp) {
				vp[j].Timestamp = uint32(i * 6000)
				stream = append(stream, frame(0, vp[j])...)
			}
			if j < len(ap) {
				ap[j].Timestamp = uint32(i * 1024)
				stream = append(stream, frame(2, ap[j])...)
			}
		}
	}
	sink := &unitSink{}
	r, err := newReader(desc, true)
	if err != nil {
		t.Fatal(err)
	}
	r.sink = sink
	errs := 0
	r.onDecodeError = func(error) { errs++ }
	if err := r.makeHandlers(); err != nil {
		t.Fatal(err)
	}
	s := streamSession(bytes.NewReader(stream), 1)
	ps := &playState{stats: make([]rtpStats, 2)}
	_ = s.readLoop(r, []int{0, 2}, ps) // ends at the end of the stream
	got := sink.byTrack(1)
	if len(got) != len(want) {
		t.Fatalf("%d audio units, want %d (%d decode errors)", len(got), len(want), errs)
	}
	for i, u := range got {
		if !bytes.Equal(u.Payload, want[i]) {
			t.Fatalf("audio unit %d differs from the access unit sent", i)
		}
	}
}
