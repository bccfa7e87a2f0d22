package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/pion/rtp"
	"go.uber.org/zap"
)

// camera is one served path: a ServerStream and the state of its timeline.
// The scheduler goroutine writes its frames; the RTSP handler and the fault
// methods change its state. All mutable fields are guarded by mu.
type camera struct {
	spec   CameraSpec
	log    *zap.Logger
	stream *gortsplib.ServerStream

	videoMedia *description.Media
	audioMedia *description.Media
	h264       *format.H264
	h265       *format.H265
	big, small *Clip
	audio      *AudioClip
	audioPT    uint8   // RTP payload type of the audio
	fps        float64 // declared frame rate: the rate of the RTP timestamps

	mu       sync.Mutex
	sessions map[*gortsplib.ServerSession]bool // value: PLAY received
	playing  int
	down     bool
	garbage  bool
	stallTo  time.Time
	jump     time.Duration
	clip     *Clip
	sendFPS  float64 // actual send rate; 0 means fps
	pkt      rtp.Packet
	video    timeline
	aud      timeline
	frames   uint64 // video frames written to the stream
	lagSkips uint64 // times the schedule was reset after falling behind
}

// timeline is the pacing and position state of one track.
type timeline struct {
	next int64     // timeline index of the next frame (grows forever)
	pos  int       // index of the next frame in the clip (loops)
	base time.Time // due time of frame k after base is base + k*interval
	k    int64
	seq  uint16
	// reported is the time of the last sender report (zero: none yet).
	reported time.Time
}

func (t *timeline) due(rate float64) time.Time {
	return t.base.Add(time.Duration(math.Round(float64(t.k) * float64(time.Second) / rate)))
}

func newCamera(srv *gortsplib.Server, spec CameraSpec, log *zap.Logger, now time.Time) (*camera, error) {
	c := &camera{
		spec:     spec,
		log:      log,
		sessions: make(map[*gortsplib.ServerSession]bool),
	}
	var err error
	if c.big, err = Fixture(spec.Codec, false); err != nil {
		return nil, err
	}
	if c.small, err = Fixture(spec.Codec, true); err != nil {
		return nil, err
	}
	c.clip = c.big
	if spec.Small {
		c.clip = c.small
	}
	c.fps = c.clip.FPS

	var vf format.Format
	if spec.Codec == CodecH265 {
		c.h265 = &format.H265{PayloadTyp: videoPayloadType, VPS: c.clip.VPS, SPS: c.clip.SPS, PPS: c.clip.PPS}
		vf = c.h265
	} else {
		c.h264 = &format.H264{PayloadTyp: videoPayloadType, PacketizationMode: 1, SPS: c.clip.SPS, PPS: c.clip.PPS}
		vf = c.h264
	}
	c.videoMedia = &description.Media{Type: description.MediaTypeVideo, Formats: []format.Format{vf}}
	desc := &description.Session{Medias: []*description.Media{c.videoMedia}}

	if ac := spec.audioCodec(); ac != "" {
		if c.audio, err = AudioClipFor(ac); err != nil {
			return nil, err
		}
		af := newAudioFormat(c.audio)
		c.audioPT = af.PayloadType()
		c.audioMedia = &description.Media{
			Type:    description.MediaTypeAudio,
			Formats: []format.Format{af},
		}
		desc.Medias = append(desc.Medias, c.audioMedia)
	}

	c.stream = &gortsplib.ServerStream{Server: srv, Desc: desc}
	if err := c.stream.Initialize(); err != nil {
		return nil, fmt.Errorf("camera %q: init stream: %w", spec.Path, err)
	}

	seed := rand.Uint32()
	c.video = timeline{base: now, seq: uint16(seed)}
	c.aud = timeline{base: now, seq: uint16(seed >> 16)}
	return c, nil
}

// close closes the stream, which disconnects every reader.
func (c *camera) close() {
	c.stream.Close()
}

// setClip switches to the large or small clip; the next frame sent is the
// first (key) frame of the new clip, which carries its parameter sets
// in-band. New readers get the new parameter sets in the SDP.
func (c *camera) setClip(small bool) {
	next := c.big
	if small {
		next = c.small
	}
	if next == c.clip {
		return
	}
	c.clip = next
	c.video.pos = 0
	if c.h264 != nil {
		c.h264.SafeSetParams(next.SPS, next.PPS)
	} else {
		c.h265.SafeSetParams(next.VPS, next.SPS, next.PPS)
	}
}

// takeSessions returns all sessions of the camera; OnSessionClose removes
// them once they are closed.
func (c *camera) takeSessions() []*gortsplib.ServerSession {
	out := make([]*gortsplib.ServerSession, 0, len(c.sessions))
	for ss := range c.sessions {
		out = append(out, ss)
	}
	return out
}

// videoTicks returns the RTP ticks (90 kHz, before the initial offset and
// jumps) of timeline frame n.
func (c *camera) videoTicks(n int64) int64 {
	return int64(math.Round(float64(n) * videoClockRate / c.fps))
}

func (c *camera) rtpTime(ticks int64, clock int) uint32 {
	jump := int64(c.jump) * int64(clock) / int64(time.Second)
	return c.spec.InitialRTPTime + uint32(ticks+jump)
}

func (c *camera) audioClock() int { return c.audio.Rate }

// audioRate is the clip's units per second.
func (c *camera) audioRate() float64 {
	return float64(c.audio.Rate) / float64(c.audio.UnitSamples)
}
