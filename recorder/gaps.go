package recorder

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// Gap records (docs/recording.md, Gaps). Each cause is noted in one place:
//
//	camera_offline, camera_auth,      the supervisor's status (run.go: OnStatus),
//	stream_unsupported                 sent to the pipeline as a down item (down)
//	stream_unsupported                 tracks without video (pipeline.handle), a
//	                                   segment closed without a keyframe (hole)
//	rtp_loss, queue_overflow           units lost before a keyframe (pipeline.handle)
//	camera_over_rate                   units dropped over the camera's cap (pipeline.handleItem)
//	camera_changed                     a restart for new settings (owner.apply)
//	node_handover, node_crash          the camera's start (owner.startEnd)
//	node_handover, camera_removed,     the camera's stop (owner.stopped), with
//	camera_blocked                     the cause the cluster gives Stop
//
// The segment writer reports every hole between segments (hole); the cause
// noted last explains it. A failure opens a record (end 0) at once; the
// hole that ends it closes it.

// The look for the last stored segment when a camera starts.
const (
	// lastRecordedTimeout bounds it.
	lastRecordedTimeout = time.Second
	// lastRecordedWithin is how far back it looks.
	lastRecordedWithin = 24 * time.Hour
)

// Segments reads what storage holds of a camera (the catalogue in
// production).
type Segments interface {
	// LastBefore returns the end of camera id's last stored segment
	// before t, looking back at most within (zero if none), and whether a
	// gap record follows it.
	LastBefore(ctx context.Context, id string, t time.Time, within time.Duration) (end time.Time, gapAfter bool, err error)
}

// gapTracker is a camera's gap bookkeeping: the cause of the next hole and
// the records still open. Its run's pipeline goroutine owns it while the
// run lives; the owner's goroutine before and after.
type gapTracker struct {
	o       *owner
	pending status.Cause // explains the next hole
	detail  string
	opens   []status.Gap // open records, oldest first
}

// downNote is a source failure, as an item for the pipeline goroutine.
type downNote struct {
	cause  status.Cause
	detail string
}

// causeOf classifies a status the supervisor reports.
func causeOf(code status.Code, err error) (status.Cause, string) {
	pe, permanent := ingest.IsPermanent(err)
	switch {
	case code == status.Permanent && permanent && pe.Reason == ingest.ReasonAuth:
		return status.CauseCameraAuth, pe.Reason
	case code == status.Permanent && permanent:
		return status.CauseStreamUnsupported, pe.Reason
	case code == status.Permanent:
		return status.CauseStreamUnsupported, ""
	case permanent:
		return status.CauseCameraOffline, pe.Reason // a stream gone after it played
	}
	return status.CauseCameraOffline, ""
}

// note makes cause explain the next hole, unless one is noted already.
func (g *gapTracker) note(cause status.Cause, detail string) {
	if g.pending == "" {
		g.pending, g.detail = cause, detail
	}
}

// down closes the open segment after a failure and opens a record of its
// cause, from the end of the last segment (or now, when a record is open
// already or nothing was recorded).
func (g *gapTracker) down(w *segmenter.Writer, cause status.Cause, detail string) {
	w.Discontinuity()
	g.pending, g.detail = cause, detail
	if n := len(g.opens); n > 0 && g.opens[n-1].Cause == cause {
		return
	}
	start := w.LastEnd()
	if len(g.opens) > 0 || start.IsZero() {
		start = time.Now()
	}
	rec := status.Gap{StartMs: start.UnixMilli(), Cause: cause, Detail: detail}
	g.opens = append(g.opens, rec)
	g.o.emitGap(rec)
}

// hole is the writer's OnGap: recording resumed at to after a hole from
// from. Open records are closed there; otherwise the noted cause (or the
// writer's own reason) explains it.
func (g *gapTracker) hole(from, to time.Time, reason string) {
	cause, detail := g.pending, g.detail
	g.pending, g.detail = "", ""
	switch {
	case reason == segmenter.GapKeyframes:
		cause, detail = status.CauseStreamUnsupported, "keyframes too far apart"
	case reason == segmenter.GapTimestamps && cause == "":
		cause, detail = status.CauseCameraOffline, "no frames"
	}
	if len(g.opens) > 0 {
		g.closeOpens(to)
		return
	}
	if cause == "" || from.IsZero() {
		return // left to readers: unknown, or nothing recorded before
	}
	g.o.emitGap(status.Gap{StartMs: from.UnixMilli(), EndMs: to.UnixMilli(), Cause: cause, Detail: detail})
}

// closeOpens closes the open records, each where the next begins, the last
// at end.
func (g *gapTracker) closeOpens(end time.Time) {
	for i, r := range g.opens {
		e := end.UnixMilli()
		if i+1 < len(g.opens) {
			e = g.opens[i+1].StartMs
		}
		r.EndMs = max(e, r.StartMs+1)
		g.o.emitGap(r)
	}
	g.opens = nil
}

// Journal receives gap records (catalogue.Journal in production).
type Journal interface {
	// Record writes g; it must not block.
	Record(g status.Gap)
}

// emitGap hands a record of this camera to Config.Journal.
func (o *owner) emitGap(g status.Gap) {
	g.Camera = o.id
	o.r.emitGap(g)
}

// emitGap counts a record and hands it, from this node, to Config.Journal.
func (r *Recorder) emitGap(g status.Gap) {
	g.Node = r.cfg.NodeID
	if m := r.cfg.Metrics; m != nil {
		m.GapRecords.WithLabelValues(string(g.Cause)).Inc()
	}
	if r.cfg.Journal != nil {
		r.cfg.Journal.Record(g)
	}
}

// stopped records why the camera stops here: its open records end now, and
// a record of cause (node_handover unless the camera was blocked or
// removed) opens at the end of its last segment.
func (o *owner) stopped(cause status.Cause) {
	start := o.lastEnd
	if len(o.gaps.opens) > 0 || start.IsZero() {
		start = time.Now()
	}
	o.gaps.closeOpens(time.Now())
	o.gaps.pending, o.gaps.detail = "", ""
	if cause != status.CauseCameraBlocked && cause != status.CauseCameraRemoved {
		cause = status.CauseNodeHandover
	}
	o.emitGap(status.Gap{StartMs: start.UnixMilli(), Cause: cause})
}

// failed records a record that cannot be recorded (the camera does not
// run): an open record of its cause.
func (o *owner) failedGap(err error) {
	cause, detail := causeOf(status.Permanent, err)
	if _, ok := ingest.IsPermanent(err); !ok {
		cause, detail = status.CauseCameraOffline, ""
	}
	if n := len(o.gaps.opens); n > 0 && o.gaps.opens[n-1].Cause == cause {
		return
	}
	start := o.lastEnd
	if len(o.gaps.opens) > 0 || start.IsZero() {
		start = time.Now()
	}
	rec := status.Gap{StartMs: start.UnixMilli(), Cause: cause, Detail: detail}
	o.gaps.opens = append(o.gaps.opens, rec)
	o.gaps.pending, o.gaps.detail = cause, detail
	o.emitGap(rec)
}

// crashEnd asks storage for the camera's last stored segment: when it ends
// later than end (the last end known from a graceful stop) and no record
// explains what follows, the node that recorded it died, and the gap
// begins there.
func (o *owner) crashEnd(end time.Time) (time.Time, bool) {
	segs := o.r.cfg.Segments
	if segs == nil {
		return end, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), lastRecordedTimeout)
	defer cancel()
	last, gapAfter, err := segs.LastBefore(ctx, o.id, time.Now(), lastRecordedWithin)
	switch {
	case err != nil:
		o.log.Warn("last stored segment not read", zap.Error(err))
	case last.IsZero() || gapAfter || !last.After(end.Add(storage.TouchToleranceMs*time.Millisecond)):
	case time.Until(last) > maxEndAhead:
		o.log.Warn("last stored segment ignored: too far ahead of this node's clock", zap.Duration("ahead", time.Until(last)))
	default:
		return last, true
	}
	return end, false
}

// lossCause is the cause of units lost before a keyframe: dropped from the
// full queue, or lost on the way (RTP loss, a unit that did not parse).
func lossCause(queueFull bool) status.Cause {
	if queueFull {
		return status.CauseQueueOverflow
	}
	return status.CauseRTPLoss
}

// sourceDown hands a failure the supervisor reports (OFFLINE, ERRO
// PERMANENTE) to the pipeline goroutine, after the units already queued.
// It waits for room in the queue (the source is down, the queue drains)
// unless the run stops.
func (p *pipeline) sourceDown(code status.Code, err error) {
	if code != status.Offline && code != status.Permanent {
		return
	}
	cause, detail := causeOf(code, err)
	p.q.PutWait(p.ctx, item{down: &downNote{cause: cause, detail: detail}})
}
