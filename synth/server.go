package synth

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"go.uber.org/zap"
)

// Server serves synthetic cameras over RTSP (TCP transport). Create it with
// NewServer, then Start; Close stops it. All methods are safe for concurrent
// use.
type Server struct {
	cfg  Config
	log  *zap.Logger
	rtsp *gortsplib.Server

	addrMu sync.Mutex
	addr   string

	// mu guards the fields below. Lock order: Server.mu, then camera.mu.
	mu       sync.RWMutex
	running  bool
	cameras  map[string]*camera
	list     []*camera
	sessions map[*gortsplib.ServerSession]*camera

	terminate chan struct{}
	done      chan struct{}
}

// NewServer returns a server for cfg. Nothing is started until Start.
func NewServer(cfg Config) *Server {
	cfg = cfg.withDefaults()
	return &Server{
		cfg:      cfg,
		log:      cfg.Log.With(zap.String("component", "synth")),
		cameras:  make(map[string]*camera),
		sessions: make(map[*gortsplib.ServerSession]*camera),
	}
}

// Start listens, adds the configured cameras and starts the scheduler
// goroutine, which runs until Close.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.terminate != nil {
		return fmt.Errorf("start: server already started or closed: %w", ErrNotStarted)
	}
	s.rtsp = &gortsplib.Server{
		Handler:        &handler{s: s},
		RTSPAddress:    s.cfg.Addr,
		WriteQueueSize: 1024,
		// The cameras send their own sender reports (camera.write):
		// gortsplib v4.16.2's put the nanoseconds where the NTP fraction
		// of a second goes, up to 0.77 s early.
		DisableRTCPSenderReports: true,
		Listen: func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			if err == nil {
				s.addrMu.Lock()
				s.addr = ln.Addr().String()
				s.addrMu.Unlock()
			}
			return ln, err
		},
	}
	if err := s.rtsp.Start(); err != nil {
		return fmt.Errorf("start rtsp server on %s: %w", s.cfg.Addr, err)
	}
	now := time.Now()
	for _, spec := range s.cfg.Cameras {
		if err := s.addLocked(spec, now); err != nil {
			for _, c := range s.list {
				c.close()
			}
			s.list, s.cameras = nil, make(map[string]*camera)
			s.rtsp.Close()
			return err
		}
	}
	s.running = true
	s.terminate = make(chan struct{})
	s.done = make(chan struct{})
	go s.run(newScheduler())
	s.log.Info("synthetic cameras serving", zap.String("addr", s.Addr()), zap.Int("cameras", len(s.list)))
	return nil
}

// Close stops the scheduler, disconnects every reader and closes the
// listener. It blocks until the server's goroutines have exited.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return
	}
	s.running = false
	cams := s.list
	s.list, s.cameras = nil, make(map[string]*camera)
	s.mu.Unlock()

	close(s.terminate)
	<-s.done
	for _, c := range cams {
		c.close()
	}
	s.rtsp.Close()
}

// Addr returns the host:port the server listens on (with the actual port when
// Config.Addr asked for port 0), or "" before Start.
func (s *Server) Addr() string {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	return s.addr
}

// URL returns the RTSP URL of a camera path, without credentials.
func (s *Server) URL(path string) string {
	return "rtsp://" + s.Addr() + "/" + strings.TrimPrefix(path, "/")
}

// AddCamera starts serving a camera. Its timeline starts now.
func (s *Server) AddCamera(spec CameraSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return fmt.Errorf("add camera %q: %w", spec.Path, ErrNotStarted)
	}
	return s.addLocked(spec, time.Now())
}

func (s *Server) addLocked(spec CameraSpec, now time.Time) error {
	spec = spec.withDefaults()
	if err := spec.validate(); err != nil {
		return err
	}
	if _, ok := s.cameras[spec.Path]; ok {
		return fmt.Errorf("add camera %q: %w", spec.Path, ErrCameraExists)
	}
	log := s.log.With(zap.String("camera", spec.Path))
	c, err := newCamera(s.rtsp, spec, log, now)
	if err != nil {
		return err
	}
	s.cameras[spec.Path] = c
	s.list = append(s.list, c)
	log.Debug("camera added", zap.String("codec", spec.Codec), zap.Bool("audio", spec.Audio),
		zap.Bool("auth", spec.User != ""))
	return nil
}

// RemoveCamera stops serving a camera and disconnects its readers. Later
// requests for the path get 404.
func (s *Server) RemoveCamera(path string) error {
	path = strings.Trim(path, "/")
	s.mu.Lock()
	c, ok := s.cameras[path]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("remove camera %q: %w", path, ErrNoCamera)
	}
	delete(s.cameras, path)
	for i, x := range s.list {
		if x == c {
			s.list = append(s.list[:i], s.list[i+1:]...)
			break
		}
	}
	for ss, sc := range s.sessions {
		if sc == c {
			delete(s.sessions, ss)
		}
	}
	s.mu.Unlock()
	c.close()
	c.log.Debug("camera removed")
	return nil
}

// camera returns the camera of a path (with or without the leading slash).
func (s *Server) camera(path string) (*camera, error) {
	path = strings.Trim(path, "/")
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.cameras[path]
	if !ok {
		if !s.running {
			return nil, fmt.Errorf("camera %q: %w", path, ErrNotStarted)
		}
		return nil, fmt.Errorf("camera %q: %w", path, ErrNoCamera)
	}
	return c, nil
}
