package rtmp

import (
	"testing"

	"github.com/vigia/vigia/ingest/rtmp/wire"
	"github.com/vigia/vigia/synth"
)

// FuzzDemux feeds the demuxer a sequence of audio and video messages cut
// from data: each message is a type byte, a timestamp byte and a length
// byte, then the payload.
func FuzzDemux(f *testing.F) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		f.Fatal(err)
	}
	msg := func(typ byte, ts byte, payload []byte) []byte {
		if len(payload) > 255 {
			payload = payload[:255]
		}
		return append([]byte{typ, ts, byte(len(payload))}, payload...)
	}
	cfg := wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindConfig, Data: wire.MarshalAVCConfig(clip.SPS, clip.PPS)}.Marshal()
	seed := msg(9, 0, cfg)
	seed = append(seed, msg(8, 0, wire.AudioTag{Format: wire.SoundAAC, Kind: wire.KindConfig, Data: []byte{0x14, 0x08}}.Marshal())...)
	seed = append(seed, msg(9, 1, wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindFrames, Data: wire.JoinNALUs([][]byte{{0x65, 0x88, 0x84}})}.Marshal())...)
	seed = append(seed, msg(8, 2, wire.AudioTag{Format: wire.SoundAAC, Kind: wire.KindFrames, Data: []byte{1, 2}}.Marshal())...)
	f.Add(seed)
	g711 := msg(9, 0, cfg)
	g711 = append(g711, msg(8, 0, append([]byte{0x83}, make([]byte, 160)...))...)
	g711 = append(g711, msg(9, 1, wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindFrames, Data: wire.JoinNALUs([][]byte{{0x65, 0x88, 0x84}})}.Marshal())...)
	g711 = append(g711, msg(8, 2, append([]byte{0x83}, make([]byte, 161)...))...)
	g711 = append(g711, msg(8, 3, []byte{0x2f, 1, 2})...)
	f.Add(g711)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newDemuxer(&collector{}, true)
		for len(data) >= 3 {
			n := int(data[2])
			if len(data) < 3+n {
				return
			}
			m := &wire.Message{Type: data[0] & 0x1f, Timestamp: uint32(data[1]) * 40, Payload: data[3 : 3+n]}
			data = data[3+n:]
			if err := d.message(m); err != nil {
				return
			}
		}
	})
}
