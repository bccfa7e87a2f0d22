package live

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
)

// rtpMTU is the largest RTP payload sent: small enough for any path
// (a 1280-byte IPv6 MTU less headers, SRTP and TURN overhead).
const rtpMTU = 1200

// frame is one video frame packetized for every viewer: the packets are
// shared and never modified once built (a viewer's track copies the
// header before it sets its own SSRC and payload type).
type frame struct {
	key  bool
	pkts []*rtp.Packet
	ts   uint32    // the packets' RTP timestamp
	ntp  time.Time // its wall-clock time (runClock): sender reports
}

// hub is a camera's WebRTC fan-out. The pipeline goroutine calls tracks
// and unit (through the stream); while viewers watch, each video unit is
// packetized once and offered to every viewer, which queues it without
// blocking or drops it. With no viewer a unit costs one atomic load.
type hub struct {
	n atomic.Int32 // viewers, read without the lock

	// tap, while set, gets a copy of every video unit: the camera's H.264
	// rendition for viewers without H.265 (transcode_hub.go).
	tap atomic.Pointer[rendition]

	mu      sync.Mutex
	viewers []*viewer
	codec   media.Codec  // video codec of the current run, "" for none
	track   *media.Track // video track of the current run
	video   int          // its index, -1 for none
	pk      packetizer
	clock   *runClock // the camera's: wall-clock times of the frames' PTS
}

func newHub(clock *runClock) *hub { return &hub{video: -1, clock: clock} }

// tracks starts a new run: the first H.264 or H.265 track is sent. Viewers
// of another codec than the new run's are closed (their session cannot
// carry it); the others go on, resuming at the run's first keyframe.
func (h *hub) tracks(tracks []*media.Track) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.video, h.track, h.codec = -1, nil, ""
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			h.video, h.track, h.codec = i, t, t.Codec
			break
		}
	}
	h.pk.newRun(h.codec)
	keep := h.viewers[:0]
	for _, v := range h.viewers {
		if v.codec == h.codec {
			v.waitKey = true
			keep = append(keep, v)
		} else {
			go v.close()
		}
	}
	clear(h.viewers[len(keep):])
	h.viewers = keep
	h.n.Store(int32(len(keep)))
}

// videoCodec returns the video codec of the current run, "" before the
// first run or when it has no video.
func (h *hub) videoCodec() media.Codec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.codec
}

// unit packetizes a video unit for the viewers; it never blocks.
func (h *hub) unit(u *media.Unit) {
	if h.n.Load() == 0 && h.tap.Load() == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if u.Track != h.video {
		return
	}
	if r := h.tap.Load(); r != nil {
		r.offer(h.track, u)
	}
	if len(h.viewers) == 0 {
		return
	}
	f := h.pk.packetize(h.track, u)
	if f == nil {
		return
	}
	f.ntp = h.clock.at(u.PTS)
	for _, v := range h.viewers {
		v.offer(f)
	}
}

// join adds v; it fails when the current run's codec is not v's.
func (h *hub) join(v *viewer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.codec != v.codec {
		return false
	}
	v.waitKey = true
	h.viewers = append(h.viewers, v)
	h.n.Store(int32(len(h.viewers)))
	return true
}

// leave removes v.
func (h *hub) leave(v *viewer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i := indexOf(h.viewers, v); i >= 0 {
		h.viewers = append(h.viewers[:i], h.viewers[i+1:]...)
		h.n.Store(int32(len(h.viewers)))
	}
}

// close closes every viewer: the camera stopped on this node.
func (h *hub) close() {
	h.mu.Lock()
	vs := h.viewers
	h.viewers = nil
	h.n.Store(0)
	h.codec = ""
	h.mu.Unlock()
	if r := h.tap.Load(); r != nil {
		r.stopViewers()
	}
	for _, v := range vs {
		go v.close()
	}
}

func indexOf(vs []*viewer, v *viewer) int {
	for i, x := range vs {
		if x == v {
			return i
		}
	}
	return -1
}
