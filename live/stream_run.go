package live

import (
	"time"

	"github.com/bluenviron/gohlslib/v2"
	"go.uber.org/zap"

	vstream "github.com/vigia/vigia/stream"
)

// loop is the stream's goroutine: it feeds the queued units to the muxer,
// starts the muxer at a video keyframe when a viewer wants it, rebuilds it
// for each run of the source and closes it after IdleTimeout without
// requests. It returns when the stream is closed.
func (st *stream) loop() {
	defer close(st.done)
	defer st.setMuxer(nil)
	var (
		f   *feeder         // nil until the tracks of run cur are known
		cur uint64          // run of the source being muxed
		m   *gohlslib.Muxer // the stream's muxer, nil until a keyframe

		batch []vstream.Entry[item]
	)
	stop := func() {
		st.setMuxer(nil)
		m = nil
	}
	idle := time.NewTimer(st.s.cfg.IdleTimeout)
	idle.Stop()
	defer idle.Stop()
	for {
		select {
		case <-st.quit:
			return
		case <-idle.C:
			if m == nil {
				continue
			}
			if left := st.idleLeft(); left > 0 {
				idle.Reset(left)
				continue
			}
			st.log.Debug("live muxer idle, closed")
			stop()
		case <-st.q.Ready():
			batch = st.q.Poll(batch[:0])
			for _, e := range batch {
				// A unit in hand leaves the queue, as one received from a
				// channel would.
				st.q.Done()
				it := e.Value
				if st.s.hookUnit != nil {
					st.s.hookUnit()
				}
				if it.run != cur {
					if it.run < cur {
						continue // a unit of a run already replaced
					}
					// The first unit of a newer run: its tracks are known,
					// since Tracks ran before the unit was queued. A run
					// started since then replaces it too.
					tracks, run := st.latest()
					cur, f = run, newFeeder(tracks)
					stop()
					if it.run != cur {
						continue
					}
				}
				if f == nil || f.video < 0 {
					continue
				}
				u := it.unit
				if m == nil {
					if !u.Key || u.Track != f.video || !st.active() {
						continue
					}
					if m = st.start(f); m == nil {
						continue
					}
					idle.Reset(st.s.cfg.IdleTimeout)
				}
				if err := f.write(m, u); err != nil {
					st.log.Debug("live write failed, restarting at next keyframe", zap.Error(err))
					stop()
				}
			}
			clear(batch)
		}
	}
}

// start starts a muxer for f's tracks and makes it the stream's; it returns
// nil when the muxer refuses the tracks.
func (st *stream) start(f *feeder) *gohlslib.Muxer {
	m := &gohlslib.Muxer{
		Tracks:             f.muxerTracks(),
		Variant:            gohlslib.MuxerVariantLowLatency,
		SegmentCount:       st.s.cfg.SegmentCount,
		SegmentMinDuration: time.Second,
		PartMinDuration:    st.s.cfg.PartDuration,
		OnEncodeError:      func(err error) { st.log.Debug("live encode error", zap.Error(err)) },
	}
	if err := m.Start(); err != nil {
		st.log.Warn("live muxer not started", zap.Error(err))
		return nil
	}
	st.setMuxer(m)
	return m
}
