package live

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// BenchmarkWebRTCViewers sends the 720p fixture clip to 20 WebRTC viewers
// of one camera (pion, over loopback, in this process) for a second of
// video per iteration, as fast as they take it; with -cpuprofile it shows
// where a viewer's cost goes (the node's side is under (*viewer).run;
// the viewers' receiving, in the same process, is most of the rest).
func BenchmarkWebRTCViewers(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  WebRTCConfig
	}{
		{"port-per-session", WebRTCConfig{ViewerQueue: 1024}},
		{"port-per-session-unbatched", WebRTCConfig{ViewerQueue: 1024, Unbatched: true}},
		{"mux", WebRTCConfig{ViewerQueue: 1024, UDPMuxAddr: "127.0.0.1:0"}},
		{"mux-unbatched", WebRTCConfig{ViewerQueue: 1024, UDPMuxAddr: "127.0.0.1:0", Unbatched: true}},
	} {
		b.Run(tc.name, func(b *testing.B) { benchViewers(b, tc.cfg) })
	}
}

func benchViewers(b *testing.B, cfg WebRTCConfig) {
	n := newRTCNode(b, cfg)
	c := n.s.Consumer()("cam")
	defer c.Close()
	src := newSource(b, synth.CodecH264, false)
	c.Tracks(src.tracks())
	var vs []*rtcClient
	for range 20 {
		vs = append(vs, dial(b, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264))
	}
	for len(vs[19].received()) == 0 || len(vs[0].received()) == 0 {
		src.burst(c, 1)
		time.Sleep(10 * time.Millisecond)
	}
	fps := int(src.clip.FPS)
	b.ResetTimer()
	for range b.N {
		for range fps {
			src.burst(c, 1)
			time.Sleep(time.Second / time.Duration(fps) / 4)
		}
	}
}

// BenchmarkSRTPProfile encrypts a 1,200-byte RTP payload with each SRTP
// protection profile the node offers, in its order of preference: what a
// packet's encryption costs a viewer (Chromium chooses HMAC-SHA1 when it
// picks, docs/live.md).
func BenchmarkSRTPProfile(b *testing.B) {
	for _, tc := range []struct {
		name     string
		profile  srtp.ProtectionProfile
		key, slt int
	}{
		{"AEAD_AES_128_GCM", srtp.ProtectionProfileAeadAes128Gcm, 16, 12},
		{"AEAD_AES_256_GCM", srtp.ProtectionProfileAeadAes256Gcm, 32, 12},
		{"AES_CM_128_HMAC_SHA1_80", srtp.ProtectionProfileAes128CmHmacSha1_80, 16, 14},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx, err := srtp.CreateContext(make([]byte, tc.key), make([]byte, tc.slt), tc.profile)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SSRC: 1},
				Payload: make([]byte, rtpMTU)}).Marshal()
			if err != nil {
				b.Fatal(err)
			}
			out := make([]byte, 0, len(raw)+32)
			b.SetBytes(int64(len(raw)))
			for i := range b.N {
				binary.BigEndian.PutUint16(raw[2:], uint16(i))
				if out, err = ctx.EncryptRTP(out[:0], raw, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
