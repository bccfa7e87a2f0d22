// Package live serves the cameras a node records as Low-Latency HLS, from
// memory: a gohlslib muxer per camera, fed from the camera's pipeline
// through a bounded queue that drops rather than blocks the recording.
package live

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/sign"
	vstream "github.com/vigia/vigia/stream"
)

// Config configures a Server.
type Config struct {
	// Keys check live tokens (purpose sign.LiveURL; the security secret
	// shared by the cluster). Without them every request is refused.
	Keys *sign.Keys

	// QueueSize is the per-camera queue between the pipeline and the muxer.
	// It defaults to 256 units.
	QueueSize int

	// PartDuration is the LL-HLS part duration. It defaults to 200 ms.
	PartDuration time.Duration

	// SegmentCount is the number of segments kept. It defaults to 7.
	SegmentCount int

	// IdleTimeout stops a camera's muxer when nobody requested its stream
	// for this long; the next request starts it again. It defaults to 60 s.
	IdleTimeout time.Duration

	// StartTimeout bounds how long a first request waits for the muxer to
	// start (at the camera's next keyframe). It defaults to 10 s.
	StartTimeout time.Duration

	// TranscodeMax bounds the H.265 cameras transcoded to H.264 at once
	// for viewers whose browser has no H.265, over LL-HLS (H264Dir) and
	// WebRTC alike: one transcoder per camera while anyone watches it.
	// Zero leaves it to WebRTCConfig.TranscodeMax (WebRTC on); with both
	// zero nothing is transcoded.
	TranscodeMax int

	// AllowOrigin, optional, says which page origins (a player on another
	// node of the cluster) may read live video cross-origin; nil: none.
	AllowOrigin func(origin string) bool

	// Registerer, optional, receives the live metrics.
	Registerer prometheus.Registerer

	// Log is the server's logger.
	Log *zap.Logger
}

// Server holds the live streams of a node.
type Server struct {
	cfg     Config
	dropped prometheus.Counter
	viewers *prometheus.CounterVec

	mu      sync.Mutex
	streams map[string]*stream

	// tc is the node's transcodes, set when WebRTC starts them: the H.264
	// LL-HLS of H.265 cameras shares them (llhls_h264.go).
	tc atomic.Pointer[transcodes]

	// hookUnit, set by tests only, runs in a stream's goroutine before it
	// handles each queued unit.
	hookUnit func()
}

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 256
	}
	if cfg.PartDuration <= 0 {
		cfg.PartDuration = 200 * time.Millisecond
	}
	if cfg.SegmentCount <= 0 {
		cfg.SegmentCount = 7
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	s := &Server{
		cfg:     cfg,
		streams: map[string]*stream{},
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_dropped_frames_total", Help: "Access units not delivered to live streams (queue full)."}),
		viewers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_live_requests_total", Help: "Live HLS requests by result."}, []string{"result"}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.dropped, s.viewers)
	}
	if cfg.TranscodeMax > 0 {
		s.startTranscodes(cfg.TranscodeMax)
	}
	return s
}

// Consumer returns the recorder consumer factory that feeds the live
// streams.
func (s *Server) Consumer() vstream.ConsumerFactory {
	return func(camera string) vstream.Consumer {
		st := newStream(s, camera)
		s.mu.Lock()
		if old := s.streams[camera]; old != nil {
			go old.Close()
		}
		s.streams[camera] = st
		s.mu.Unlock()
		return st
	}
}

func (s *Server) remove(camera string, st *stream) {
	s.mu.Lock()
	if s.streams[camera] == st {
		delete(s.streams, camera)
	}
	s.mu.Unlock()
}

// Handler serves /live/{camera}/{file} with a valid token, and
// /live/{camera}/h264/{file}: the same in H.264 whatever the camera sends
// (H264Dir). A request waits up to StartTimeout for the camera's muxer to
// start; when the camera restarts meanwhile it waits for the new stream,
// when it stops here the answer is 404.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/live/")
		camera, file, ok := strings.Cut(rest, "/")
		if !ok || camera == "" {
			http.NotFound(w, r)
			return
		}
		_, h264 := splitH264(file)
		allowOrigin(w.Header(), r, s.cfg.AllowOrigin)
		if terr := check(s.cfg.Keys, camera, r.URL.Query(), time.Now()); terr != nil {
			s.viewers.WithLabelValues("refused").Inc()
			http.Error(w, terr.msg, terr.status)
			return
		}
		deadline := time.Now().Add(s.cfg.StartTimeout)
		var stopped *stream
		for {
			st := s.stream(camera)
			if st == nil || st == stopped {
				s.viewers.WithLabelValues("not_here").Inc()
				http.Error(w, "camera not recorded by this node", http.StatusNotFound)
				return
			}
			wait := st.wait
			if h264 {
				wait = st.waitH264
			}
			m, err := wait(r.Context(), deadline)
			if h264 && s.refuseH264(w, err) {
				return
			}
			switch {
			case err == nil:
				s.viewers.WithLabelValues("served").Inc()
				m.Handle(w, r)
				return
			case errors.Is(err, errStopped):
				stopped = st // look for the camera's next stream
			case errors.Is(err, errNotStarted):
				s.viewers.WithLabelValues("not_started").Inc()
				http.Error(w, "stream not started yet", http.StatusServiceUnavailable)
				return
			default:
				return // the viewer left
			}
		}
	})
}

// stream returns camera's stream, nil when the node does not record it.
func (s *Server) stream(camera string) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams[camera]
}

// Cameras returns the cameras with a live stream on this node.
func (s *Server) Cameras() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.streams))
	for id := range s.streams {
		out = append(out, id)
	}
	return out
}
