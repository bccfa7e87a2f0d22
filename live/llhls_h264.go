package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gohlslib/v2"
	"github.com/bluenviron/gohlslib/v2/pkg/codecs"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
)

// H264Dir is the path element, between the camera and the file, of a
// camera's LL-HLS in H.264 whatever the camera sends
// (/live/{camera}/h264/index.m3u8): the camera's own stream when it is
// H.264, its H.264 rendition when it is H.265. Pages whose browser decodes
// no HEVC ask for it.
const H264Dir = "h264"

// hlsRenditionQueue is the transcoded units queued for the H.264 LL-HLS
// muxer; past it units are dropped up to the next keyframe.
const hlsRenditionQueue = 64

// errNoTranscode refuses the H.264 LL-HLS of an H.265 camera on a node
// that does not transcode (webrtc.transcode_max 0, WebRTC off, no cgo).
var errNoTranscode = errors.New("the camera sends H.265 and this node does not transcode it to H.264")

// hlsRendition is the LL-HLS muxer of an H.265 camera's H.264 rendition:
// it holds the camera's rendition (one transcoder per camera, shared with
// its WebRTC viewers, counted against webrtc.transcode_max) while someone
// asked for it within IdleTimeout, and muxes its units on its own
// goroutine (run), which exits when it goes idle or the camera's stream
// closes. The rendition's audio is not carried: the transcoder makes
// video only.
type hlsRendition struct {
	st *stream
	r  *rendition

	in       chan *media.Unit
	skipping atomic.Bool // a unit was dropped: skip up to the next keyframe

	lastWanted atomic.Int64 // unix ns of the last request
	muxer      atomic.Pointer[gohlslib.Muxer]

	quit     chan struct{} // closed by stop
	stopOnce sync.Once
	done     chan struct{} // closed when run has returned
}

// offer copies u (valid only during the call) for the muxer without
// blocking; the rendition's goroutine calls it for each H.264 unit.
func (h *hlsRendition) offer(u *media.Unit) {
	if h.skipping.Load() {
		if !u.Key {
			return
		}
		h.skipping.Store(false)
	}
	select {
	case h.in <- u.Clone():
	default:
		h.skipping.Store(true)
		h.st.s.dropped.Inc()
	}
}

// stop ends run; it does not wait.
func (h *hlsRendition) stop() { h.stopOnce.Do(func() { close(h.quit) }) }

// idleLeft returns the time left before h is idle.
func (h *hlsRendition) idleLeft() time.Duration {
	return time.Until(time.Unix(0, h.lastWanted.Load()).Add(h.st.s.cfg.IdleTimeout))
}

// retireIfIdle stops h when nobody asked for it within IdleTimeout and
// returns 0; otherwise it returns the time left. It decides under the
// lock h264HLS takes, so a request either refreshes h in time or gets a
// new one.
func (h *hlsRendition) retireIfIdle() time.Duration {
	h.st.h264Mu.Lock()
	defer h.st.h264Mu.Unlock()
	if left := h.idleLeft(); left > 0 {
		return left
	}
	if h.st.h264 == h {
		h.st.h264 = nil
	}
	h.stop()
	return 0
}

// run muxes the rendition's units from its first keyframe on, and on
// return closes the muxer, detaches from the rendition and releases it.
func (h *hlsRendition) run() {
	defer close(h.done)
	defer func() {
		if m := h.muxer.Swap(nil); m != nil {
			m.Close()
		}
		h.r.hls.CompareAndSwap(h, nil)
		h.r.t.release(h.r)
		h.st.dropH264(h)
	}()
	var (
		m     *gohlslib.Muxer
		track *gohlslib.Track
	)
	idle := time.NewTimer(h.st.s.cfg.IdleTimeout)
	defer idle.Stop()
	for {
		select {
		case <-h.quit:
			return
		case <-idle.C:
			if left := h.retireIfIdle(); left > 0 {
				idle.Reset(left)
				continue
			}
			h.st.log.Debug("live H.264 rendition muxer idle, closed")
			return
		case u := <-h.in:
			if m == nil {
				sps, pps := h264Params(u.NALUs)
				if !u.Key || sps == nil || pps == nil {
					continue
				}
				track = &gohlslib.Track{Codec: &codecs.H264{SPS: sps, PPS: pps}, ClockRate: 90000}
				m = &gohlslib.Muxer{
					Tracks:             []*gohlslib.Track{track},
					Variant:            gohlslib.MuxerVariantLowLatency,
					SegmentCount:       h.st.s.cfg.SegmentCount,
					SegmentMinDuration: time.Second,
					PartMinDuration:    h.st.s.cfg.PartDuration,
					OnEncodeError:      func(err error) { h.st.log.Debug("live H.264 rendition encode error", zap.Error(err)) },
				}
				if err := m.Start(); err != nil {
					h.st.log.Warn("live H.264 rendition muxer not started", zap.Error(err))
					m = nil
					continue
				}
				h.muxer.Store(m)
			}
			if err := m.WriteH264(track, u.Time, ticks(u.PTS, 90000), u.NALUs); err != nil {
				h.st.log.Debug("live H.264 rendition write failed", zap.Error(err))
			}
		}
	}
}

// h264Params returns the SPS and PPS among nalus, nil when absent.
func h264Params(nalus [][]byte) (sps, pps []byte) {
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			sps = n
		case h264.NALUTypePPS:
			pps = n
		}
	}
	return sps, pps
}

// h264HLS returns the running H.264 LL-HLS rendition of st, starting it
// (and the camera's transcoder, when no WebRTC viewer runs it already)
// when none runs. It fails with errNoTranscode on a node that does not
// transcode and errTranscodeFull past webrtc.transcode_max.
func (st *stream) h264HLS() (*hlsRendition, error) {
	st.h264Mu.Lock()
	defer st.h264Mu.Unlock()
	if st.stopped.Load() {
		return nil, errStopped
	}
	if h := st.h264; h != nil {
		select {
		case <-h.quit:
		default:
			h.lastWanted.Store(time.Now().UnixNano())
			return h, nil
		}
	}
	tc := st.s.tc.Load()
	if tc == nil {
		return nil, errNoTranscode
	}
	r, err := tc.acquire(st)
	if err != nil {
		return nil, err
	}
	h := &hlsRendition{st: st, r: r, in: make(chan *media.Unit, hlsRenditionQueue),
		quit: make(chan struct{}), done: make(chan struct{})}
	h.lastWanted.Store(time.Now().UnixNano())
	r.hls.Store(h)
	st.h264 = h
	go h.run()
	return h, nil
}

// dropH264 forgets h as st's rendition muxer once it stopped.
func (st *stream) dropH264(h *hlsRendition) {
	st.h264Mu.Lock()
	defer st.h264Mu.Unlock()
	if st.h264 == h {
		st.h264 = nil
	}
}

// closeH264 stops st's H.264 LL-HLS rendition and waits for it: the
// stream is closing.
func (st *stream) closeH264() {
	st.h264Mu.Lock()
	h := st.h264
	st.h264Mu.Unlock()
	if h != nil {
		h.stop()
		<-h.done
	}
}

// waitH264 returns the muxer of camera's LL-HLS in H.264: the camera's own
// when its video is not H.265, else its rendition's, waiting until
// deadline for the camera's video track (a camera connecting) and then
// for the transcoder's first keyframe.
func (st *stream) waitH264(ctx context.Context, deadline time.Time) (*gohlslib.Muxer, error) {
	for {
		switch st.hub.videoCodec() {
		case "":
			// No video yet: wait for the camera's tracks.
		case media.H265:
			h, err := st.h264HLS()
			if err != nil {
				return nil, err
			}
			if m := h.muxer.Load(); m != nil {
				return m, nil
			}
		default:
			return st.wait(ctx, deadline)
		}
		if !time.Now().Before(deadline) {
			return nil, errNotStarted
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-st.quit:
			return nil, errStopped
		case <-time.After(min(50*time.Millisecond, time.Until(deadline))):
		}
	}
}

// splitH264 reports whether file (the path after the camera) asks for the
// H.264 LL-HLS, and the file within it.
func splitH264(file string) (string, bool) {
	if rest, ok := strings.CutPrefix(file, H264Dir+"/"); ok {
		return rest, true
	}
	return file, false
}

// refuseH264 answers a request for the H.264 LL-HLS of an H.265 camera the
// node cannot transcode: 406 when it never does, 503 "transcode capacity
// reached" past webrtc.transcode_max (the page says why, as for WebRTC).
func (s *Server) refuseH264(w http.ResponseWriter, err error) bool {
	switch {
	case errors.Is(err, errNoTranscode):
		s.viewers.WithLabelValues("codec").Inc()
		http.Error(w, fmt.Sprintf("%v (H265)", err), http.StatusNotAcceptable)
	case errors.Is(err, errTranscodeFull):
		s.viewers.WithLabelValues("transcode_full").Inc()
		http.Error(w, "the camera sends H265 and the node cannot transcode one more camera: "+err.Error(), http.StatusServiceUnavailable)
	default:
		return false
	}
	return true
}
