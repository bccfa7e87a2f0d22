package live

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gohlslib/v2"
	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	vstream "github.com/vigia/vigia/stream"
)

var _ vstream.Consumer = (*stream)(nil)

// stream is one camera's live HLS muxer and the goroutine that feeds it
// (run). It implements stream.Consumer: Tracks and Unit are called by the
// camera's pipeline goroutine, never block, and do nothing after Close.
type stream struct {
	s      *Server
	camera string
	log    *zap.Logger
	q      *vstream.Queue[item] // units for run, each tagged with its run of the source
	quit   chan struct{}        // closed by Close: run returns
	done   chan struct{}        // closed when run has returned

	closeOnce sync.Once
	stopped   atomic.Bool // Close was called: Tracks and Unit do nothing

	video int // index of the video track of the latest run, -1 without (pipeline goroutine)

	// lastWanted is the time (unix ns) of the last viewer's request: the
	// muxer runs only while someone asked within IdleTimeout.
	lastWanted atomic.Int64

	// The tracks of the source's latest run, with the run's number. Tracks
	// replaces them (never dropped, whatever the queue holds); run takes
	// them when it meets the first unit of that run.
	runMu   sync.Mutex
	run     atomic.Uint64 // written under runMu
	pending []*media.Track

	muxer atomic.Pointer[gohlslib.Muxer] // nil until tracks are known and a keyframe arrived

	hub   *hub      // the WebRTC viewers
	audio *audioHub // their sound
	g711  *g711Pass // the camera's G.711 as it came, for those who take it
	clock runClock  // wall-clock times of the run's PTS, for sender reports

	h264Mu sync.Mutex
	h264   *hlsRendition // the H.264 LL-HLS of an H.265 camera, nil when none runs
}

// item is a unit queued for run, with the run of the source it belongs to.
type item struct {
	run  uint64
	unit *media.Unit
}

// Why a viewer's wait for the muxer ended without it.
var (
	errNotStarted = errors.New("live stream not started in time")
	errStopped    = errors.New("live stream stopped")
)

func newStream(s *Server, camera string) *stream {
	st := &stream{
		s:      s,
		camera: camera,
		log:    s.cfg.Log.With(zap.String("camera", camera)),
		// The muxer keeps what it is given; the pipeline reuses a unit's
		// memory once Unit returns: a unit queued is a copy.
		q: vstream.NewQueue(vstream.QueueConfig[item]{
			Size: s.cfg.QueueSize,
			Keep: func(it *item) { it.unit = it.unit.Clone() },
		}),
		video: -1,
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	st.hub = newHub(&st.clock)
	st.g711 = &g711Pass{clock: &st.clock}
	st.audio = newAudioHub(&st.clock, st.log.With(zap.String("proto", "webrtc")))
	go st.loop()
	return st
}

// Tracks implements stream.Consumer. The tracks are kept, not queued: a
// full queue never loses the start of a run.
func (st *stream) Tracks(tracks []*media.Track) {
	if st.stopped.Load() {
		return
	}
	st.video = -1
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			st.video = i
			break
		}
	}
	st.runMu.Lock()
	st.pending = tracks
	st.run.Add(1)
	st.runMu.Unlock()
	st.clock.newRun()
	st.hub.tracks(tracks)
	st.audio.tracks(tracks)
}

// latest returns the tracks of the source's latest run and its number.
func (st *stream) latest() ([]*media.Track, uint64) {
	st.runMu.Lock()
	defer st.runMu.Unlock()
	return st.pending, st.run.Load()
}

// Unit implements stream.Consumer; it never blocks. Video goes to the
// WebRTC viewers (packetized once, queued per viewer). For LL-HLS, units
// are dropped while nobody watches (uncounted), and when the queue is full
// (counted; video then resumes at the next keyframe, the frames before it
// dropped and counted too).
func (st *stream) Unit(u *media.Unit) {
	if st.stopped.Load() {
		return
	}
	if u.Track == st.video {
		st.hub.unit(u)
		st.g711.videoAt(u.PTS)
	} else {
		st.audio.unit(u)
	}
	if !st.active() && st.muxer.Load() == nil {
		return
	}
	if st.q.Put(item{run: st.run.Load(), unit: u}, vstream.KindOf(u, u.Track == st.video), u.Size()) != vstream.Queued {
		st.s.dropped.Inc()
	}
}

// Close implements stream.Consumer. It returns once the stream's
// goroutine has exited and its muxer is closed.
func (st *stream) Close() {
	st.closeOnce.Do(func() {
		st.stopped.Store(true)
		st.q.Close()
		close(st.quit)
		<-st.done
		st.closeH264()
		st.hub.close()
		st.s.remove(st.camera, st)
	})
}

// active reports whether a viewer asked for the stream within IdleTimeout.
func (st *stream) active() bool {
	return st.idleLeft() > 0
}

// idleLeft returns the time left before the stream is idle.
func (st *stream) idleLeft() time.Duration {
	return time.Until(time.Unix(0, st.lastWanted.Load()).Add(st.s.cfg.IdleTimeout))
}

// wait marks the stream wanted and returns its muxer, waiting until
// deadline for it to start at the camera's next keyframe.
func (st *stream) wait(ctx context.Context, deadline time.Time) (*gohlslib.Muxer, error) {
	st.lastWanted.Store(time.Now().UnixNano())
	for {
		if m := st.muxer.Load(); m != nil {
			return m, nil
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

// setMuxer makes m the muxer viewers get and closes the previous one, which
// answers the requests it held.
func (st *stream) setMuxer(m *gohlslib.Muxer) {
	if old := st.muxer.Swap(m); old != nil {
		old.Close()
	}
}
