package live

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/media"
)

// renditionQueue is the units queued for a camera's transcoder; past it
// units are dropped (counted) up to the next keyframe: the camera's
// pipeline never waits for the transcoder.
const renditionQueue = 32

// errTranscodeFull refuses a viewer that needs a transcode past the
// node's bound.
var errTranscodeFull = errors.New("transcode capacity reached")

// transcodes runs the H.264 renditions of a node's H.265 cameras for
// WebRTC viewers whose browser offers no H.265: one per camera whatever
// its viewers, only while one watches, at most max at once.
type transcodes struct {
	max int
	log *zap.Logger

	mu      sync.Mutex
	running map[*stream]*rendition

	refused prometheus.Counter
	dropped prometheus.Counter
	failed  prometheus.Counter
	active  prometheus.GaugeFunc
}

func newTranscodes(max int, log *zap.Logger) *transcodes {
	t := &transcodes{max: max, log: log, running: map[*stream]*rendition{},
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_transcode_refused_total", Help: "Live viewers (WebRTC or LL-HLS in H.264) refused (503) because the node ran webrtc.transcode_max transcodes already."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_transcode_dropped_frames_total", Help: "Camera frames a live transcoder could not keep up with (dropped up to the next keyframe; recording is not affected)."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_transcode_errors_total", Help: "Frames a live transcoder failed to decode or encode."}),
	}
	t.active = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vigia_live_transcodes", Help: "Cameras transcoded to H.264 for live WebRTC and LL-HLS viewers now."},
		func() float64 { return float64(t.count()) })
	return t
}

func (t *transcodes) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.refused, t.dropped, t.failed, t.active}
}

func (t *transcodes) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.running)
}

// acquire returns st's rendition for one more viewer, starting it when
// none watches yet; past the bound it fails with errTranscodeFull. The
// viewer calls release once when it leaves.
func (t *transcodes) acquire(st *stream) (*rendition, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.running[st]; r != nil {
		r.users++
		return r, nil
	}
	if len(t.running) >= t.max {
		t.refused.Inc()
		return nil, fmt.Errorf("%w: %d cameras are transcoded, webrtc.transcode_max is %d", errTranscodeFull, len(t.running), t.max)
	}
	r := &rendition{t: t, st: st, hub: newHub(&st.clock), users: 1,
		in: make(chan tapped, renditionQueue), quit: make(chan struct{}), done: make(chan struct{}),
		log: st.log.With(zap.String("proto", "transcode"))}
	r.hub.tracks([]*media.Track{{Codec: media.H264, ClockRate: 90000}})
	t.running[st] = r
	go r.run()
	st.hub.tap.Store(r)
	return r, nil
}

// release ends a viewer's use of r; the last one stops the transcoder.
func (t *transcodes) release(r *rendition) {
	t.mu.Lock()
	r.users--
	// closeAll may have stopped r already.
	last := r.users == 0 && t.running[r.st] == r
	if last {
		delete(t.running, r.st)
		r.st.hub.tap.CompareAndSwap(r, nil)
	}
	t.mu.Unlock()
	if last {
		close(r.quit)
	}
}

// closeAll stops every transcoder and waits for them.
func (t *transcodes) closeAll() {
	t.mu.Lock()
	rs := make([]*rendition, 0, len(t.running))
	for st, r := range t.running {
		rs = append(rs, r)
		st.hub.tap.CompareAndSwap(r, nil)
		delete(t.running, st)
	}
	t.mu.Unlock()
	for _, r := range rs {
		close(r.quit)
		r.hub.close()
		<-r.done
	}
}

// tapped is a camera unit copied for the transcoder with its track.
type tapped struct {
	track *media.Track
	unit  *media.Unit
}

// rendition is one camera's H.264 rendition: its goroutine (run)
// transcodes the units the camera's hub taps to it and hands the result
// to its own hub, whose viewers are the camera's H.264 viewers. It exits
// when the last viewer leaves.
type rendition struct {
	t     *transcodes
	st    *stream
	hub   *hub
	users int // guarded by t.mu
	log   *zap.Logger

	in       chan tapped
	skipping atomic.Bool // a unit was dropped: skip up to the next keyframe

	hls atomic.Pointer[hlsRendition] // the camera's H.264 LL-HLS muxer, while one runs

	quit chan struct{}
	done chan struct{}
}

// offer copies u for the transcoder without blocking; the camera's hub
// calls it, under its lock, for every video unit while r runs.
func (r *rendition) offer(track *media.Track, u *media.Unit) {
	if r.skipping.Load() {
		if !u.Key {
			r.t.dropped.Inc()
			return
		}
		r.skipping.Store(false)
	}
	select {
	case r.in <- tapped{track: track, unit: u.Clone()}:
	default:
		r.skipping.Store(true)
		r.t.dropped.Inc()
	}
}

// stopViewers closes the rendition's viewers: the camera stopped here.
func (r *rendition) stopViewers() { go r.hub.close() }

// run transcodes on a goroutine of its own. It neither locks nor ends an
// OS thread: a thread that ends takes with it the child processes it
// started (decoder processes are started with Pdeathsig), and any thread
// of the runtime may have started one.
func (r *rendition) run() {
	defer close(r.done)
	var (
		tr    *transcode.Transcoder
		track *media.Track
	)
	defer func() {
		if tr != nil {
			tr.Close()
		}
	}()
	r.log.Info("live transcode to H.264 started")
	defer r.log.Info("live transcode to H.264 stopped")
	for {
		select {
		case <-r.quit:
			return
		case it := <-r.in:
			if it.track != track {
				// A new run of the camera: a new decoder for its codec.
				if tr != nil {
					tr.Close()
					tr = nil
				}
				track = it.track
				var err error
				if tr, err = transcode.New(track.Codec, transcode.Options{}); err != nil {
					r.log.Warn("live transcode unavailable", zap.Error(err))
					r.hub.close()
					<-r.quit
					return
				}
			}
			outs, err := tr.Push(it.unit.NALUs, it.unit.PTS, it.unit.Key, [][]byte{track.VPS, track.SPS, track.PPS})
			if err != nil {
				r.t.failed.Inc()
				r.log.Debug("live transcode failed", zap.Error(err))
			}
			for _, o := range outs {
				u := &media.Unit{Track: 0, PTS: o.PTS, DTS: o.PTS, Key: o.Key, NALUs: o.NALUs, Time: it.unit.Time}
				r.hub.unit(u)
				if h := r.hls.Load(); h != nil {
					h.offer(u)
				}
			}
		}
	}
}

// startTranscodes sets up the node's transcodes, shared by LL-HLS and
// WebRTC, when the build can transcode.
func (s *Server) startTranscodes(max int) {
	if !transcode.Available() {
		s.cfg.Log.Warn("transcode_max is set but this build cannot transcode (no cgo): H.265 cameras play only in browsers with H.265")
		return
	}
	tc := newTranscodes(max, s.cfg.Log)
	s.tc.Store(tc)
	if s.cfg.Registerer != nil {
		s.cfg.Registerer.MustRegister(tc.collectors()...)
	}
}

// startTranscodes takes the server's transcodes, or sets them up when cfg
// allows any and the build can transcode.
func (w *WebRTC) startTranscodes() {
	if tc := w.s.tc.Load(); tc != nil {
		w.tc = tc
		return
	}
	if w.cfg.TranscodeMax <= 0 {
		return
	}
	if !transcode.Available() {
		w.log.Warn("webrtc.transcode_max is set but this build cannot transcode (no cgo): H.265 cameras play over WebRTC only in browsers with H.265")
		return
	}
	w.tc = newTranscodes(w.cfg.TranscodeMax, w.log)
	w.s.tc.Store(w.tc)
	if w.s.cfg.Registerer != nil {
		w.s.cfg.Registerer.MustRegister(w.tc.collectors()...)
	}
}

// transcodeFor answers an offer that lacks the camera's codec: for an
// H.265 camera and an offer of H.264, the camera's H.264 rendition when
// the node may run one more (a status 0); otherwise nil and the refusal
// (status, result label, message): 406 when no transcode applies, 503
// past webrtc.transcode_max.
func (w *WebRTC) transcodeFor(st *stream, codec media.Codec, offer string) (*rendition, int, string, string) {
	if w.tc == nil || codec != media.H265 || !offers(offer, media.H264) {
		return nil, http.StatusNotAcceptable, "codec", "the offer lacks " + string(codec) + ", the camera's codec"
	}
	r, err := w.tc.acquire(st)
	if err != nil {
		return nil, http.StatusServiceUnavailable, "transcode_full",
			"the offer lacks H265, the camera's codec, and the node cannot transcode one more camera: " + err.Error()
	}
	return r, 0, "", ""
}

// useRendition makes v a viewer of r (nil: of the camera itself).
func (v *viewer) useRendition(r *rendition) {
	if r == nil {
		return
	}
	v.hub = r.hub
	v.release = sync.OnceFunc(func() { r.t.release(r) })
}

// releaseRendition ends v's use of its rendition, once; it does nothing
// for a viewer of the camera itself.
func (v *viewer) releaseRendition() {
	if v.release != nil {
		v.release()
	}
}
