package recorder

import (
	"runtime/debug"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
)

// startRun tells the segmenter and the consumers of a new run of the
// source, through a new stage when the recorder has a Config.Stage; the
// previous run's stage passes on what it holds first.
func (p *pipeline) startRun(run *sourceRun) {
	p.endStage()
	tracks := run.tracks
	p.replaced = p.replaced[:0]
	if f := p.o.r.cfg.Stage; f != nil {
		p.guardStage(func() { tracks, p.stage = f(p.o.id, run.tracks) })
		for i := range tracks {
			p.replaced = append(p.replaced, i < len(run.tracks) && tracks[i] != run.tracks[i])
		}
	}
	p.handle(nil, false, tracks)
}

// pass hands a unit to the stage, or on when there is none; gap is set on
// a keyframe after units were dropped from the queue.
func (p *pipeline) pass(u *media.Unit, gap bool) {
	if p.stage == nil {
		if t := u.Track; t >= 0 && t < len(p.replaced) && p.replaced[t] {
			// The stage that turned this track into another is gone.
			u.Release()
			return
		}
		p.handle(u, gap, nil)
		return
	}
	if gap {
		u.Gap = true // the stage's units carry it themselves
	}
	p.guardStage(func() { p.stage.Unit(u, p.emit) })
}

// emit is the stage's way on to the segmenter and the consumers.
func (p *pipeline) emit(u *media.Unit) { p.handle(u, false, nil) }

// endStage flushes and frees the stage of the run that ends.
func (p *pipeline) endStage() {
	if p.stage == nil {
		return
	}
	p.guardStage(func() { p.stage.Flush(p.emit) })
	if s := p.stage; s != nil {
		p.stage = nil
		p.guardStage(s.Close)
	}
}

// guardStage runs f; a panic in the stage is counted and logged, and the
// run goes on without the stage (the units it held are lost, the units of
// the tracks it turned into others are not recorded).
func (p *pipeline) guardStage(f func()) {
	defer func() {
		if v := recover(); v != nil {
			p.o.log.Error("recording stage panicked, removed", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			if m := p.o.r.cfg.Metrics; m != nil {
				m.Panics.Inc()
			}
			p.stage = nil
		}
	}()
	f()
}
