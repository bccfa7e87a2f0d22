package recorder

import (
	"runtime/debug"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
)

// Stage is a step between a camera's queue and its segmenter for one run
// of its source: it takes the run's units in order and passes on, through
// emit, the units to record in the order to record them (audio it
// transcodes, video it holds until the audio of its time is out). It owns
// the units it is given until it passes them on; those it does not pass
// on, it releases. Only the camera's pipeline goroutine calls it.
type Stage interface {
	Unit(u *media.Unit, emit func(*media.Unit))

	// Flush passes on every unit the stage holds: the run is over.
	Flush(emit func(*media.Unit))

	// Close frees the stage.
	Close()
}

// StageFactory builds, at the start of each run of a camera's source, the
// stage of that run from its tracks: it returns the tracks the segmenter
// and the consumers are told of (those the stage turns into others
// replaced) and the stage, nil when it has nothing to do.
type StageFactory func(camera string, tracks []*media.Track) ([]*media.Track, Stage)

// startRun tells the segmenter and the consumers of a new run of the
// source, through a new stage when the recorder has a StageFactory; the
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

// pass hands a unit to the stage, or on when there is none.
func (p *pipeline) pass(it item) {
	if p.stage == nil {
		if t := it.unit.Track; t >= 0 && t < len(p.replaced) && p.replaced[t] {
			// The stage that turned this track into another is gone.
			it.unit.Release()
			return
		}
		p.handle(it.unit, it.gap, nil)
		return
	}
	if it.gap {
		it.unit.Gap = true // the stage's units carry it themselves
	}
	p.guardStage(func() { p.stage.Unit(it.unit, p.emit) })
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
