package recorder

import (
	"context"
	"runtime/debug"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
)

var _ ingest.Sink = (*pipeline)(nil)

// item is one message from the source to the pipeline goroutine: 32
// bytes, so that a camera's queue of 512 is 16 KiB (a run's tracks are
// not sent through the queue).
type item struct {
	run  *sourceRun // the run the unit belongs to
	unit *media.Unit
	size int32     // the unit's bytes, counted in the recorder's QueueBytes
	gap  bool      // units were lost before this keyframe
	down *downNote // the source failed (gaps.go)
}

// sourceRun is one run of the source: its tracks, as Tracks gave them.
type sourceRun struct {
	tracks []*media.Track
	video  int // index of the video track, -1 without
}

// pipeline is a camera's single owner goroutine: it takes units from a
// bounded queue (the source never blocks on it) and feeds the segmenter.
type pipeline struct {
	o         *owner
	ctx       context.Context
	q         *unitQueue
	writer    *segmenter.Writer
	consumers []Consumer

	cur      atomic.Pointer[sourceRun] // the source's current run
	applied  *sourceRun                // the run the segmenter and consumers were told of (pipeline goroutine)
	skipping atomic.Bool               // video units are dropped until the next keyframe
	gaps     *gapTracker               // the owner's, while this run lives (gaps.go)

	// stage is the applied run's Stage (Config.Stage), nil for none;
	// replaced marks the tracks it turned into others (pipeline goroutine).
	stage    Stage
	replaced []bool
}

func newPipeline(ctx context.Context, o *owner, queue int, w *segmenter.Writer) *pipeline {
	return &pipeline{o: o, ctx: ctx, q: newUnitQueue(queue), writer: w}
}

// Tracks implements ingest.Sink. It never waits: the new run's tracks go
// with each of its units, and the pipeline goroutine starts the run at the
// first of them, after the units of the run before still queued.
func (p *pipeline) Tracks(tracks []*media.Track) error {
	run := &sourceRun{tracks: tracks, video: -1}
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			run.video = i
			break
		}
	}
	p.cur.Store(run)
	p.skipping.Store(false)
	return nil
}

// Unit implements ingest.Sink. It never blocks: when the queue is full, or
// the queues of all cameras hold the recorder's QueueBytes, the unit is
// dropped and counted, and video resumes at the next keyframe with a
// discontinuity so that no segment holds undecodable frames.
func (p *pipeline) Unit(u *media.Unit) {
	m := p.o.r.cfg.Metrics
	run := p.cur.Load()
	size := u.Size()
	if m != nil {
		m.FramesReceived.Inc()
		m.BytesReceived.Add(float64(size))
	}
	if run == nil || u.Track < 0 || u.Track >= len(run.tracks) {
		p.o.dropped("no_params")
		u.Release()
		return
	}
	video := u.Track == run.video
	gap := false
	if video && p.skipping.Load() {
		if !u.Key {
			p.o.dropped("queue_full")
			u.Release()
			return
		}
		gap = true
	}
	queued := &p.o.r.queued
	if queued.Add(int64(size)) <= p.o.r.cfg.QueueBytes {
		// Audio waits for the next video unit to wake the pipeline
		// (lazyUnits).
		if p.q.put(item{run: run, unit: u, size: int32(size), gap: gap}, video || gap) {
			if gap {
				p.skipping.Store(false)
			}
			return
		}
	}
	queued.Add(-int64(size))
	p.o.dropped("queue_full")
	u.Release()
	if video {
		p.skipping.Store(true)
	}
}

// run consumes the queue until it is closed, then finishes the open segment.
func (p *pipeline) run() {
	defer func() {
		p.endStage()
		p.writer.Close()
		for _, c := range p.consumers {
			c.Close()
		}
	}()
	var batch []item
	for {
		var ok bool
		batch, ok = p.q.take(batch[:0])
		for _, it := range batch {
			p.handleItem(it)
			p.q.done()
		}
		clear(batch)
		if !ok {
			return
		}
	}
}

// handleItem handles one item of the queue.
func (p *pipeline) handleItem(it item) {
	if it.down != nil {
		p.gaps.down(p.writer, it.down.cause, it.down.detail)
		return
	}
	if it.run != p.applied {
		p.applied = it.run
		p.startRun(it.run)
	}
	p.o.r.queued.Add(-int64(it.size))
	p.pass(it)
}

// feed passes a unit, or a new run's tracks (u nil), to the consumers,
// each guarded so that a panicking consumer is counted and dropped without
// touching the recording.
func (p *pipeline) feed(u *media.Unit, tracks []*media.Track) {
	for i := 0; i < len(p.consumers); i++ {
		c := p.consumers[i]
		ok := func() (ok bool) {
			defer func() {
				if v := recover(); v != nil {
					p.o.log.Error("consumer panicked, removed", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
					if m := p.o.r.cfg.Metrics; m != nil {
						m.Panics.Inc()
					}
				}
			}()
			if u == nil {
				c.Tracks(tracks)
			} else {
				c.Unit(u)
			}
			return true
		}()
		if !ok {
			p.consumers = append(p.consumers[:i], p.consumers[i+1:]...)
			i--
		}
	}
}

// handle writes a unit u, after a loss of queued units when lost, or starts
// a run with its tracks (u nil), then feeds the consumers.
func (p *pipeline) handle(u *media.Unit, lost bool, tracks []*media.Track) {
	defer func() {
		if v := recover(); v != nil {
			p.o.log.Error("pipeline panicked, segment closed", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			if m := p.o.r.cfg.Metrics; m != nil {
				m.Panics.Inc()
			}
			func() {
				defer func() { _ = recover() }()
				p.writer.Discontinuity()
			}()
		}
	}()
	if u == nil {
		if err := p.writer.SetTracks(tracks); err != nil {
			p.o.log.Warn("tracks not recordable", zap.Error(err))
			p.gaps.down(p.writer, status.CauseStreamUnsupported, "no video track")
		}
		p.feed(nil, tracks)
		return
	}
	if lost || u.Gap {
		p.gaps.note(lossCause(lost), "")
		p.writer.Discontinuity()
	}
	if err := p.writer.WriteUnit(u); err != nil {
		p.o.log.Debug("unit not written", zap.Error(err))
	}
	if u.Key {
		w, h := p.writer.Dimensions()
		p.o.setDimensions(w, h)
	}
	p.feed(u, nil)
	// The segmenter and every consumer are done with the unit (consumers
	// keep copies or read frames back through Unit.Stored): its memory
	// goes back to the source's pool.
	u.Release()
}
