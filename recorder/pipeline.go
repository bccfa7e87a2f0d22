package recorder

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/stream"
)

var _ ingest.Sink = (*pipeline)(nil)

// lazyUnits is how many units that need no prompt handling (audio) may wait
// in a camera's queue before the pipeline goroutine is woken for them: they
// go with the next video unit, which wakes it. A camera sends an audio
// packet every 20–64 ms and a video frame every 40–200 ms; waking the
// pipeline for each was half of its wake-ups.
const lazyUnits = 8

// item is one message from the source to the pipeline goroutine: 24
// bytes, 32 with its queue entry, so that a camera's queue of 512 is
// 16 KiB (a run's tracks are not sent through the queue).
type item struct {
	run  *sourceRun // the run the unit belongs to
	unit *media.Unit
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
	q         *stream.Queue[item]
	writer    *segmenter.Writer
	consumers []stream.Consumer

	gate    *gate                     // the camera's rate cap and queue share
	held    atomic.Int64              // bytes of this camera in the queues (Config.QueueBytes)
	cur     atomic.Pointer[sourceRun] // the source's current run
	applied *sourceRun                // the run the segmenter and consumers were told of (pipeline goroutine)
	gaps    *gapTracker               // the owner's, while this run lives (gaps.go)

	// stage is the applied run's Stage (Config.Stage), nil for none;
	// replaced marks the tracks it turned into others (pipeline goroutine).
	stage    stream.Stage
	replaced []bool
}

// newPipeline returns a camera's pipeline with a queue of queue units,
// bounded with the other cameras' by the recorder's QueueBytes.
func newPipeline(ctx context.Context, o *owner, queue int, w *segmenter.Writer) *pipeline {
	q := stream.NewQueue(stream.QueueConfig[item]{
		Size: queue, Lazy: lazyUnits, Bytes: &o.r.queued, MaxBytes: o.r.cfg.QueueBytes,
	})
	o.r.pipelines.Add(1) // until run ends
	return &pipeline{o: o, ctx: ctx, q: q, writer: w, gate: newGate(o.r.cfg.MaxCameraRate)}
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
	p.q.Resume()
	return nil
}

// Unit implements ingest.Sink. It never blocks: when the camera is over
// its byte-rate cap (Config.MaxCameraRate) or holds its share of the
// recorder's QueueBytes (Recorder.queueShare), its queue is full, or the
// queues of all cameras hold QueueBytes, the unit is dropped and counted, and video resumes at the next keyframe with a
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
	if reason := p.gate.admit(u, size, video, p.held.Load()+int64(size) > p.o.r.queueShare(), time.Now()); reason != "" {
		p.o.dropped(reason)
		u.Release()
		return
	}
	// Audio waits for the next video unit to wake the pipeline
	// (lazyUnits).
	p.held.Add(int64(size))
	if p.q.Put(item{run: run, unit: u}, stream.KindOf(u, video), size) != stream.Queued {
		p.held.Add(-int64(size))
		p.o.dropped("queue_full")
		u.Release()
	}
}

// run consumes the queue until it is closed, then finishes the open segment.
func (p *pipeline) run() {
	defer func() {
		p.o.r.pipelines.Add(-1)
		p.endStage()
		p.writer.Close()
		for _, c := range p.consumers {
			c.Close()
		}
	}()
	var batch []stream.Entry[item]
	for {
		var ok bool
		batch, ok = p.q.Take(batch[:0])
		for _, e := range batch {
			p.handleItem(e.Value, e.Gap)
			p.held.Add(-int64(e.Size))
			p.q.Done()
		}
		clear(batch)
		if !ok {
			return
		}
	}
}

// handleItem handles one item of the queue; gap is set on a keyframe
// after video units were dropped.
func (p *pipeline) handleItem(it item, gap bool) {
	if it.down != nil {
		p.gaps.down(p.writer, it.down.cause, it.down.detail)
		return
	}
	if it.run != p.applied {
		p.applied = it.run
		p.startRun(it.run)
	}
	if it.unit.Gap {
		if c := p.gate.take(); c != "" {
			p.gaps.note(c, "")
		}
	}
	p.pass(it.unit, gap)
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
