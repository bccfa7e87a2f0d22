package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// FleetConfig configures a Fleet.
type FleetConfig struct {
	// Addr is the TCP address the RTSP server listens on.
	// It defaults to "127.0.0.1:0" (a free port chosen at Start; see Addr).
	Addr string

	// Cameras is the number of cameras, served at the paths cam-1 … cam-N.
	Cameras int

	// Codec is CodecH264, CodecH265 or CodecMixed (cam-1 H.265, cam-2
	// H.264, and so on alternately).
	// It defaults to CodecH264.
	Codec string

	// Audio gives every camera an AAC track (16 kHz mono).
	Audio bool

	// Tick is the period of the scheduler that writes the due frames of
	// every session. Frames go out at most Tick late.
	// It defaults to 10 ms.
	Tick time.Duration

	// SenderReportEvery is the period of the RTCP sender reports of each
	// track of a session.
	// It defaults to 5 seconds.
	SenderReportEvery time.Duration

	// SessionTimeout ends a session from which nothing (no request, no
	// receiver report) arrived for this long; it is announced in the
	// Session header.
	// It defaults to 60 seconds.
	SessionTimeout time.Duration

	// MaxPending is the most bytes a session queues when its reader does not
	// keep up; past it, video frames are dropped (and counted) as a real
	// camera's full send buffer drops them.
	// It defaults to 512 KiB (2 s of a 2 Mbit/s camera, after what the
	// socket buffer holds).
	MaxPending int

	// SendBuffer, when set, is the socket send buffer of each connection
	// (SO_SNDBUF), as a camera with little memory has; 0 leaves it to the
	// system, which grows it with the connection's needs.
	SendBuffer int

	// Log receives the fleet's logs.
	// It defaults to a no-op logger.
	Log *zap.Logger
}

func (c FleetConfig) withDefaults() FleetConfig {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.Codec == "" {
		c.Codec = CodecH264
	}
	if c.Tick <= 0 {
		c.Tick = 10 * time.Millisecond
	}
	if c.SenderReportEvery <= 0 {
		c.SenderReportEvery = 5 * time.Second
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 60 * time.Second
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 512 << 10
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	return c
}

// Fleet serves many synthetic RTSP cameras cheaply, for load: each
// session is real RTSP (OPTIONS, DESCRIBE, SETUP, PLAY with RTP interleaved
// on the TCP connection, RTCP sender reports, answers to keepalives), but
// its media is the fixture clip laid out once as ready interleaved frames
// (wireFrame), stamped per session and written with one vectored write per
// video frame by one scheduler goroutine for all sessions. Every session
// has its own SSRC, sequence numbers and timestamps, and starts at a random
// place in the clip (mid-GOP, as a real camera) at a random phase of the
// frame interval, so that the frames of many cameras do not come in bursts.
//
// The fleet has no faults; Server is the synthetic camera for those.
// Create it with NewFleet, then Start; Close stops it. All methods are safe
// for concurrent use.
type Fleet struct {
	cfg     FleetConfig
	log     *zap.Logger
	cameras []*fleetCamera

	ln        net.Listener
	epoch     time.Time // the origin of the scheduler's times
	terminate chan struct{}
	done      chan struct{} // closed when the scheduler exits
	conns     sync.WaitGroup

	mu       sync.Mutex
	running  bool
	incoming []*fleetSession // sessions that started playing, for the scheduler
	open     map[*fleetSession]struct{}

	stats fleetCounters
}

// fleetCamera is one path of the fleet. Its timeline runs from the
// fleet's start whether anyone reads it or not: its frame k is due at
// phase + k frame intervals after the fleet's epoch, shows frame pos0 + k
// of the clip and carries k in its mark (FrameMark). Each camera has its
// own phase and place in the clip, so that the frames and keyframes of
// many cameras do not come together.
type fleetCamera struct {
	path  string
	clips *fleetClips
	phase time.Duration
	pos0  int
}

// frameDue returns when frame k of c is due, since the fleet's epoch.
func (c *fleetCamera) frameDue(k int64) time.Duration {
	return c.phase + frameTime(k, c.clips.clip.FPS)
}

// frameAt returns the first frame of c due at or after t.
func (c *fleetCamera) frameAt(t time.Duration) int64 {
	k := max(int64(float64(t-c.phase)*c.clips.clip.FPS/float64(time.Second)), 0)
	for k > 0 && c.frameDue(k-1) >= t {
		k--
	}
	for c.frameDue(k) < t {
		k++
	}
	return k
}

// fleetCounters are the fleet's counters (FleetStats).
type fleetCounters struct {
	sessions     atomic.Int64
	sessionsEver atomic.Uint64
	frames       atomic.Uint64
	bytes        atomic.Uint64
	dropped      atomic.Uint64
	late         atomic.Uint64
	skipped      atomic.Uint64
	reports      atomic.Uint64
	requests     atomic.Uint64
	badRequests  atomic.Uint64
}

// FleetStats are the fleet's counters since Start.
type FleetStats struct {
	// Cameras served; Sessions playing now; SessionsTotal ever played.
	Cameras       int    `json:"cameras"`
	Sessions      int64  `json:"sessions"`
	SessionsTotal uint64 `json:"sessions_total"`

	// Frames is the video frames sent (written or queued behind a slow
	// reader) and Bytes all bytes written to readers.
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`

	// Dropped is the video frames not sent because their reader was
	// MaxPending behind.
	Dropped uint64 `json:"dropped"`

	// Late counts the times a session's schedule was more than a second
	// behind (the fleet did not get the CPU it needed) and went on from the
	// present; Skipped the video frames it did not send because of it
	// (missing from what the reader stores, but not the reader's loss).
	Late    uint64 `json:"late"`
	Skipped uint64 `json:"skipped"`

	// SenderReports is the RTCP sender reports sent.
	SenderReports uint64 `json:"sender_reports"`

	// Requests is the RTSP requests answered; BadRequests those that did
	// not parse (the connection was closed).
	Requests    uint64 `json:"requests"`
	BadRequests uint64 `json:"bad_requests"`
}

// NewFleet returns a fleet for cfg. Nothing is started until Start.
func NewFleet(cfg FleetConfig) *Fleet {
	cfg = cfg.withDefaults()
	return &Fleet{
		cfg:  cfg,
		log:  cfg.Log.With(zap.String("component", "synth_fleet")),
		open: make(map[*fleetSession]struct{}),
	}
}

// Start prepares the clips, listens and starts the scheduler goroutine,
// which runs until Close.
func (f *Fleet) Start() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running || f.terminate != nil {
		return fmt.Errorf("start fleet: already started or closed: %w", ErrNotStarted)
	}
	if err := f.prepare(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.cfg.Addr)
	if err != nil {
		return fmt.Errorf("fleet listen on %s: %w", f.cfg.Addr, err)
	}
	f.ln = ln
	f.epoch = time.Now()
	f.running = true
	f.terminate = make(chan struct{})
	f.done = make(chan struct{})
	go f.schedule()
	f.conns.Add(1)
	go f.accept()
	f.log.Info("synthetic fleet serving", zap.String("addr", f.Addr()), zap.Int("cameras", len(f.cameras)))
	return nil
}

// prepare lays out the clips and the cameras.
func (f *Fleet) prepare() error {
	if f.cfg.Cameras <= 0 {
		return fmt.Errorf("fleet of %d cameras: %w", f.cfg.Cameras, ErrBadSpec)
	}
	byCodec := map[string]*fleetClips{}
	for i := 1; i <= f.cfg.Cameras; i++ {
		codec := CameraCodec(f.cfg.Codec, i)
		clips := byCodec[codec]
		if clips == nil {
			var err error
			if clips, err = newFleetClips(codec, f.cfg.Audio); err != nil {
				return err
			}
			byCodec[codec] = clips
		}
		f.cameras = append(f.cameras, &fleetCamera{
			path:  "cam-" + strconv.Itoa(i),
			clips: clips,
			phase: time.Duration(rand.Int64N(int64(frameTime(1, clips.clip.FPS)))),
			pos0:  rand.IntN(len(clips.video.frames)),
		})
	}
	return nil
}

// Close stops the scheduler, closes the listener and every connection, and
// blocks until the fleet's goroutines have exited.
func (f *Fleet) Close() {
	f.mu.Lock()
	if !f.running {
		f.mu.Unlock()
		return
	}
	f.running = false
	open := make([]*fleetSession, 0, len(f.open))
	for s := range f.open {
		open = append(open, s)
	}
	f.mu.Unlock()
	close(f.terminate)
	<-f.done
	_ = f.ln.Close()
	for _, s := range open {
		s.close()
	}
	f.conns.Wait()
}

// Addr returns the host:port the fleet listens on, or "" before Start.
func (f *Fleet) Addr() string {
	if f.ln == nil {
		return ""
	}
	return f.ln.Addr().String()
}

// URL returns the RTSP URL of camera i (1 … Cameras).
func (f *Fleet) URL(i int) string {
	return "rtsp://" + f.Addr() + "/cam-" + strconv.Itoa(i)
}

// Stats returns the fleet's counters.
func (f *Fleet) Stats() FleetStats {
	c := &f.stats
	return FleetStats{
		Cameras:       len(f.cameras),
		Sessions:      c.sessions.Load(),
		SessionsTotal: c.sessionsEver.Load(),
		Frames:        c.frames.Load(),
		Bytes:         c.bytes.Load(),
		Dropped:       c.dropped.Load(),
		Late:          c.late.Load(),
		Skipped:       c.skipped.Load(),
		SenderReports: c.reports.Load(),
		Requests:      c.requests.Load(),
		BadRequests:   c.badRequests.Load(),
	}
}

// camera returns the camera of a URL path ("/cam-7" or "/cam-7/trackID=0")
// and what follows its name, or nil.
func (f *Fleet) camera(path string) (*fleetCamera, string) {
	rest, ok := strings.CutPrefix(path, "/cam-")
	if !ok {
		return nil, ""
	}
	digits := 0
	for digits < len(rest) && digits < 9 && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	n, err := strconv.Atoi(rest[:digits])
	if err != nil || n < 1 || n > len(f.cameras) || rest[0] == '0' {
		return nil, ""
	}
	tail := rest[digits:]
	if tail != "" && tail[0] != '/' {
		return nil, ""
	}
	return f.cameras[n-1], tail
}

// accept takes connections until the listener closes.
func (f *Fleet) accept() {
	defer f.conns.Done()
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				f.log.Warn("accept", zap.Error(err))
			}
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok && f.cfg.SendBuffer > 0 {
			_ = tc.SetWriteBuffer(f.cfg.SendBuffer)
		}
		s := newFleetSession(f, nc)
		f.mu.Lock()
		if !f.running {
			f.mu.Unlock()
			_ = nc.Close()
			continue
		}
		f.open[s] = struct{}{}
		f.conns.Add(1)
		f.mu.Unlock()
		go func() { // exits when the connection ends
			defer f.conns.Done()
			s.serve()
			f.mu.Lock()
			delete(f.open, s)
			f.mu.Unlock()
		}()
	}
}

// play hands a session that started playing to the scheduler.
func (f *Fleet) play(s *fleetSession) {
	f.mu.Lock()
	f.incoming = append(f.incoming, s)
	f.mu.Unlock()
}
