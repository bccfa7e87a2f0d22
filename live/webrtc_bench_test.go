package live

import (
	"testing"
	"time"

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
