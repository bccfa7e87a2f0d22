package live

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gohlslib/v2"
	"github.com/bluenviron/gohlslib/v2/pkg/codecs"
	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
)

// stream is one camera's live HLS muxer and the goroutine that feeds it.
type stream struct {
	s      *Server
	camera string
	log    *zap.Logger
	ch     chan item
	done   chan struct{}
	closed sync.Once

	skipping atomic.Bool // queue overflowed: video resumes at a keyframe

	// wanted is set by viewers' requests: the muxer runs only while someone
	// watched in the last IdleTimeout, so idle cameras cost nothing.
	lastWanted atomic.Int64

	mu    sync.RWMutex
	muxer *gohlslib.Muxer // nil until tracks are known and a keyframe arrived
}

type item struct {
	tracks []*media.Track
	unit   *media.Unit
}

func newStream(s *Server, camera string) *stream {
	st := &stream{
		s:      s,
		camera: camera,
		log:    s.cfg.Log.With(zap.String("camera", camera)),
		ch:     make(chan item, s.cfg.QueueSize),
		done:   make(chan struct{}),
	}
	go st.run()
	return st
}

// Tracks implements recorder.Consumer.
func (st *stream) Tracks(tracks []*media.Track) {
	select {
	case st.ch <- item{tracks: tracks}:
	default:
		st.s.dropped.Inc()
		st.skipping.Store(true)
	}
}

// Unit implements recorder.Consumer; it never blocks. Units are dropped
// while nobody watches, except to close an idle muxer.
func (st *stream) Unit(u *media.Unit) {
	if !st.active() {
		st.mu.RLock()
		running := st.muxer != nil
		st.mu.RUnlock()
		if !running {
			return
		}
	}
	if st.skipping.Load() {
		if !u.Key {
			st.s.dropped.Inc()
			return
		}
	}
	select {
	// The muxer keeps what it is given; the pipeline reuses u's memory
	// once Unit returns.
	case st.ch <- item{unit: u.Clone()}:
		if u.Key {
			st.skipping.Store(false)
		}
	default:
		st.s.dropped.Inc()
		st.skipping.Store(true)
	}
}

// Close implements recorder.Consumer.
func (st *stream) Close() {
	st.closed.Do(func() {
		close(st.ch)
		<-st.done
		st.s.remove(st.camera, st)
	})
}

// active reports whether a viewer asked for the stream recently.
func (st *stream) active() bool {
	return time.Since(time.Unix(0, st.lastWanted.Load())) < st.s.cfg.IdleTimeout
}

// handle serves a viewer, starting the muxer on demand: the first request
// waits until the muxer starts at the camera's next keyframe.
func (st *stream) handle(w http.ResponseWriter, r *http.Request) {
	st.lastWanted.Store(time.Now().UnixNano())
	deadline := time.Now().Add(st.s.cfg.StartTimeout)
	for {
		st.mu.RLock()
		m := st.muxer
		st.mu.RUnlock()
		if m != nil {
			m.Handle(w, r)
			return
		}
		if time.Now().After(deadline) {
			http.Error(w, "stream not started yet", http.StatusServiceUnavailable)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// feeder converts units into muxer writes for one run of the source.
type feeder struct {
	tracks []*media.Track
	video  int
	audio  int
	htrack []*gohlslib.Track // by source track index; nil for tracks not served
	list   []*gohlslib.Track // the muxer's tracks
}

func (st *stream) run() {
	defer close(st.done)
	defer st.setMuxer(nil)
	var f *feeder
	waitKey := true
	for it := range st.ch {
		if it.tracks != nil {
			st.setMuxer(nil)
			f = newFeeder(it.tracks)
			waitKey = true
			continue
		}
		if f == nil || f.video < 0 {
			continue
		}
		u := it.unit
		if !st.active() {
			if !waitKey {
				st.setMuxer(nil) // nobody watched for IdleTimeout
				waitKey = true
			}
			continue
		}
		if u.Track == f.video && u.Key && waitKey {
			m := &gohlslib.Muxer{
				Tracks:             f.list,
				Variant:            gohlslib.MuxerVariantLowLatency,
				SegmentCount:       st.s.cfg.SegmentCount,
				SegmentMinDuration: time.Second,
				PartMinDuration:    st.s.cfg.PartDuration,
				OnEncodeError:      func(err error) { st.log.Debug("live encode error", zap.Error(err)) },
			}
			if err := m.Start(); err != nil {
				st.log.Warn("live muxer not started", zap.Error(err))
				continue
			}
			st.setMuxer(m)
			waitKey = false
		}
		st.mu.RLock()
		m := st.muxer
		st.mu.RUnlock()
		if m == nil {
			continue
		}
		if err := f.write(m, u); err != nil {
			st.log.Debug("live write failed, restarting at next keyframe", zap.Error(err))
			st.setMuxer(nil)
			waitKey = true
		}
	}
}

func (st *stream) setMuxer(m *gohlslib.Muxer) {
	st.mu.Lock()
	old := st.muxer
	st.muxer = m
	st.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

func newFeeder(tracks []*media.Track) *feeder {
	f := &feeder{tracks: tracks, video: -1, audio: -1, htrack: make([]*gohlslib.Track, len(tracks))}
	var list []*gohlslib.Track
	for i, t := range tracks {
		var ht *gohlslib.Track
		switch {
		case t.Codec == media.H264 && f.video < 0:
			ht = &gohlslib.Track{Codec: &codecs.H264{SPS: t.SPS, PPS: t.PPS}, ClockRate: 90000}
			f.video = i
		case t.Codec == media.H265 && f.video < 0:
			ht = &gohlslib.Track{Codec: &codecs.H265{VPS: t.VPS, SPS: t.SPS, PPS: t.PPS}, ClockRate: 90000}
			f.video = i
		case t.Codec == media.AAC && t.AAC != nil && f.audio < 0:
			ht = &gohlslib.Track{Codec: &codecs.MPEG4Audio{Config: *t.AAC}, ClockRate: t.AAC.SampleRate}
			f.audio = i
		}
		if ht != nil {
			f.htrack[i] = ht
			list = append(list, ht)
		}
	}
	f.list = list
	return f
}

func ticks(d time.Duration, rate int) int64 {
	sec := int64(d / time.Second)
	rem := int64(d % time.Second)
	return sec*int64(rate) + rem*int64(rate)/int64(time.Second)
}

func (f *feeder) write(m *gohlslib.Muxer, u *media.Unit) error {
	ht := f.htrack[u.Track]
	if ht == nil {
		return nil
	}
	switch {
	case u.Track == f.video && f.tracks[u.Track].Codec == media.H265:
		return m.WriteH265(ht, u.Time, ticks(u.PTS, 90000), u.NALUs)
	case u.Track == f.video:
		return m.WriteH264(ht, u.Time, ticks(u.PTS, 90000), u.NALUs)
	case u.Track == f.audio:
		return m.WriteMPEG4Audio(ht, u.Time, ticks(u.PTS, ht.ClockRate), [][]byte{u.Payload})
	}
	return nil
}
