package live

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/media"
)

// g711Capability is the codec of the audio track of a camera whose sound
// is G.711 (8 kHz mono), sent as the camera sends it.
func g711Capability(c media.Codec) webrtc.RTPCodecCapability {
	if c == media.G711A {
		return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMA, ClockRate: 8000, Channels: 1}
	}
	return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1}
}

// registerG711 registers PCMU and PCMA with their static payload types.
func registerG711(me *webrtc.MediaEngine) error {
	for pt, c := range map[webrtc.PayloadType]media.Codec{0: media.G711U, 8: media.G711A} {
		if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: g711Capability(c), PayloadType: pt},
			webrtc.RTPCodecTypeAudio); err != nil {
			return err
		}
	}
	return nil
}

// g711Name is the SDP encoding name of c, "" when c is not G.711.
func g711Name(c media.Codec) string {
	switch c {
	case media.G711U:
		return "PCMU"
	case media.G711A:
		return "PCMA"
	}
	return ""
}

// g711Pass is a camera's G.711 as it came from the camera, before the
// recorder made it AAC: sent to the WebRTC viewers whose browser takes
// G.711, with no transcoding. The pipeline goroutine calls source and
// unit; viewers join and leave.
type g711Pass struct {
	clock *runClock
	live  atomic.Bool // a G.711 run and a listener: videoAt has work

	mu      sync.Mutex
	track   *media.Track // the run's G.711 track, nil for none
	viewers []*viewer
	// Packets waiting for the video of their time (g711Hold), in order,
	// and the newest video presentation time sent, with whether one was.
	held    []heldPacket
	video   time.Duration
	hasVid  bool
	seq     uint16
	tsOff   uint32 // added to a unit's PTS in 8 kHz ticks
	lastTS  uint32
	init    bool
	started bool // a packet of the run was made
}

// source starts a run whose source audio is t (nil: none, or not G.711
// at 8 kHz mono).
func (g *g711Pass) source(t *media.Track) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t != nil && (g711Name(t.Codec) == "" || t.ClockRate != 8000 || t.Channels > 1) {
		t = nil
	}
	g.track, g.started = t, false
	g.held, g.hasVid = nil, false
	g.live.Store(g.track != nil && len(g.viewers) > 0)
	if !g.init {
		g.seq, g.lastTS, g.init = uint16(rand.Uint32()), rand.Uint32(), true
	}
}

// codec returns the G.711 codec of the current run, "" for none.
func (g *g711Pass) codec() media.Codec {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.track == nil {
		return ""
	}
	return g.track.Codec
}

// g711Packet is the samples of one G.711 packet sent: 20 ms at 8 kHz.
const g711Packet = 160

// unit sends u, a unit of track t, to the viewers, in packets of 20 ms
// (ingest gathers a camera's packets into units of 60 ms or more); it
// never blocks.
func (g *g711Pass) unit(t *media.Track, u *media.Unit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t != g.track || len(g.viewers) == 0 || len(u.Payload) == 0 {
		return
	}
	t8 := uint32(ticks(u.PTS, 8000))
	for off := 0; off < len(u.Payload); off += g711Packet {
		first := !g.started
		if first {
			g.tsOff = g.lastTS + g711Packet - t8
			g.started = true
		}
		ts := t8 + uint32(off) + g.tsOff
		g.lastTS = ts
		at := u.PTS + time.Duration(off)*time.Second/8000
		p := &audioPacket{pkt: &rtp.Packet{Header: rtp.Header{Version: 2, Marker: first, SequenceNumber: g.seq, Timestamp: ts},
			Payload: append([]byte(nil), u.Payload[off:min(off+g711Packet, len(u.Payload))]...)}, ntp: g.clock.at(at)}
		g.seq++
		g.held = append(g.held, heldPacket{p: p, pts: at})
	}
	g.flush(u.PTS - g711Hold)
}

// g711Hold bounds how long a G.711 packet waits for the video of its time:
// the recorder holds a G.711 camera's video for the AAC it makes of the
// sound (audio/transcode.MaxHold), and sends the G.711 on at once.
const g711Hold = 600 * time.Millisecond

// heldPacket is a G.711 packet waiting, with its presentation time.
type heldPacket struct {
	p   *audioPacket
	pts time.Duration
}

// videoAt notes that the camera's video of pts went out to the viewers:
// the G.711 of that time follows it. Sent so, audio and video reach a
// browser together: the recorder holds the video about 0.3 s for the AAC
// it makes of the sound, a delay a browser otherwise makes up by slowing
// the audio, which Chromium does by steps over half a minute.
func (g *g711Pass) videoAt(pts time.Duration) {
	if !g.live.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.track == nil {
		return
	}
	if !g.hasVid || pts > g.video {
		g.video, g.hasVid = pts, true
	}
	g.flush(-1 << 62)
}

// flush sends the held packets up to the newest video sent, and those
// older than before whatever the video. Called with g.mu held.
func (g *g711Pass) flush(before time.Duration) {
	n := 0
	for _, h := range g.held {
		if h.pts >= before && (!g.hasVid || h.pts > g.video) {
			break
		}
		for _, v := range g.viewers {
			select {
			case v.aq <- h.p:
			default:
				if v.w.atc != nil {
					v.w.atc.dropped.Inc()
				}
			}
		}
		n++
	}
	g.held = g.held[:copy(g.held, g.held[n:])]
}

func (g *g711Pass) join(v *viewer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.viewers = append(g.viewers, v)
	g.live.Store(g.track != nil)
}

func (g *g711Pass) leave(v *viewer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := indexOf(g.viewers, v); i >= 0 {
		g.viewers = append(g.viewers[:i], g.viewers[i+1:]...)
	}
	g.live.Store(g.track != nil && len(g.viewers) > 0)
	if len(g.viewers) == 0 {
		g.held = nil
	}
}

// SourceAudio tells the live server of a run of camera whose audio the
// recorder turns into AAC: t is the camera's own audio track (nil: a run
// without such audio). When t is G.711 at 8 kHz, mono, it returns the
// function the recorder's stage hands each of the track's units to,
// before transcoding (it copies what it keeps and never blocks): WebRTC
// viewers whose browser takes G.711 get them as they are; else nil.
func (s *Server) SourceAudio(camera string, t *media.Track) func(*media.Unit) {
	st := s.stream(camera)
	if st == nil {
		return nil
	}
	st.g711.source(t)
	if st.g711.codec() == "" {
		return nil
	}
	return func(u *media.Unit) { st.g711.unit(t, u) }
}

// g711For reports whether a new viewer whose offer takes the camera's
// G.711 gets it as it is: the camera's run has G.711 and the offer's
// audio section lists it.
func (w *WebRTC) g711For(st *stream, offer string) media.Codec {
	c := st.g711.codec()
	if c == "" || !offersAudio(offer, g711Name(c)) {
		return ""
	}
	return c
}

// useG711 makes v a listener of the camera's G.711.
func (v *viewer) useG711(st *stream, c media.Codec) {
	v.pass = st.g711
	v.passCodec = c
	v.aq = make(chan *audioPacket, viewerAudioQueue)
}
