package recorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// camCtl is a camera the test breaks and mends: its source fails with
// fail, and after lose drops its units up to the next keyframe, which it
// marks as following a loss (as the RTSP source does after lost packets).
type camCtl struct {
	mu    sync.Mutex
	fail  error
	lose  bool
	delay time.Duration // before the source delivers anything (connecting)
}

func (c *camCtl) set(fail error, lose bool) {
	c.mu.Lock()
	c.fail, c.lose = fail, lose
	c.mu.Unlock()
}

func (c *camCtl) state() (error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fail, c.lose
}

// ctlSource plays the fixture in real (bubble) time until its camera fails.
type ctlSource struct {
	clip *synth.Clip
	ctl  *camCtl
}

func (s ctlSource) Run(ctx context.Context, sink ingest.Sink) error {
	s.ctl.mu.Lock()
	delay := s.ctl.delay
	s.ctl.mu.Unlock()
	time.Sleep(delay)
	tr := s.clip.Track()
	if err := sink.Tracks([]*media.Track{&tr}); err != nil {
		return err
	}
	step := time.Duration(float64(time.Second) / s.clip.FPS)
	t0 := time.Now()
	tick := time.NewTicker(step)
	defer tick.Stop()
	lost := false
	for i := 0; ; i++ {
		fail, lose := s.ctl.state()
		if fail != nil {
			return fail
		}
		u := s.clip.Units[i%len(s.clip.Units)]
		u.PTS = time.Duration(i) * step
		u.DTS = u.PTS
		u.Time = t0.Add(u.PTS)
		switch {
		case lose && !lost:
			lost = true
			s.ctl.set(nil, false)
		case lost && !u.Key:
		case lost:
			lost = false
			u.Gap = true
			sink.Unit(&u)
		default:
			sink.Unit(&u)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ctlRig is a rig whose "ctl" cameras are driven by ctl.
func ctlRig(t *testing.T) (*rig, *camCtl) {
	rg := newRig(t)
	rg.rec.cfg.BackoffMax = 2 * time.Second
	ctl := &camCtl{}
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	rg.rec.cfg.Drivers["ctl"] = func(ingest.Camera, ingest.SourceConfig) (ingest.Source, error) {
		if fail, _ := ctl.state(); fail != nil {
			return failSource{err: fail}, nil
		}
		return ctlSource{clip: clip, ctl: ctl}, nil
	}
	return rg, ctl
}

func (rg *rig) gapLog() []status.Gap {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	return append([]status.Gap(nil), rg.gaps...)
}

// gapString writes g relative to base, in seconds, for messages.
func gapString(g status.Gap, base time.Time) string {
	end := "open"
	if g.EndMs != 0 {
		end = fmt.Sprintf("%.3f", float64(g.EndMs-base.UnixMilli())/1000)
	}
	return fmt.Sprintf("%s %.3f..%s", g.Cause, float64(g.StartMs-base.UnixMilli())/1000, end)
}

// holeAfter returns the first hole between segments that ends after t:
// the end of the segment before it and the start of the one after (zero
// when none follows).
func holeAfter(segs []segmenter.Segment, t time.Time) (end, resumed time.Time) {
	for i, s := range segs {
		if i+1 == len(segs) {
			return s.End(), time.Time{}
		}
		if next := segs[i+1].Start; next.Sub(s.End()) > storage.TouchToleranceMs*time.Millisecond && next.After(t) {
			return s.End(), next
		}
	}
	return time.Time{}, time.Time{}
}

func wantGaps(t *testing.T, got []status.Gap, base time.Time, want ...status.Gap) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		g, w := got[i], want[i]
		ok = g.Camera == "c1" && g.Node == "n1" && g.Cause == w.Cause && g.StartMs == w.StartMs && g.EndMs == w.EndMs &&
			(w.Detail == "" || g.Detail == w.Detail)
	}
	if !ok {
		var gs, ws []string
		for _, g := range got {
			gs = append(gs, gapString(g, base))
		}
		for _, w := range want {
			ws = append(ws, gapString(w, base))
		}
		t.Errorf("gap records\n %v\nwant\n %v", gs, ws)
	}
}

// A camera that goes away: an open record from the end of its last segment
// when it fails, closed where recording resumes; the stop records a
// handover.
func TestGapCameraOffline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg, ctl := ctlRig(t)
		base := time.Now()
		rg.rec.Record(cam("c1", "ctl://cam/main"), 1)
		settle(10 * time.Second)
		ctl.set(errors.New("connection reset by peer"), false)
		downAt := time.Now()
		settle(20 * time.Second)
		if s := rg.status("c1"); s.Code != status.Offline {
			t.Fatalf("status %v, want OFFLINE", s.Code)
		}
		if g := rg.gapLog(); len(g) != 1 || !g[0].Open() {
			t.Fatalf("while offline: %v, want one open record", g)
		}
		ctl.set(nil, false)
		settle(12 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second)
		segs := rg.stored()
		end, resumed := holeAfter(segs, downAt)
		if end.IsZero() || resumed.IsZero() {
			t.Fatalf("no hole around %v in %d segments", downAt, len(segs))
		}
		last := segs[len(segs)-1].End()
		wantGaps(t, rg.gapLog(), base,
			status.Gap{StartMs: end.UnixMilli(), Cause: status.CauseCameraOffline},
			status.Gap{StartMs: end.UnixMilli(), EndMs: resumed.UnixMilli(), Cause: status.CauseCameraOffline},
			status.Gap{StartMs: last.UnixMilli(), Cause: status.CauseNodeHandover})
	})
}

// Wrong credentials from the start: an open record of camera_auth; once
// mended (after the slow permanent retry), it closes where recording
// begins.
func TestGapCameraAuth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg, ctl := ctlRig(t)
		base := time.Now()
		ctl.set(ingest.Permanent(ingest.ReasonAuth, errors.New("401")), false)
		rg.rec.Record(cam("c1", "ctl://cam/main"), 1)
		settle(5 * time.Second)
		if s := rg.status("c1"); s.Code != status.Permanent {
			t.Fatalf("status %v, want ERRO PERMANENTE", s.Code)
		}
		failedAt := rg.gapLog()
		ctl.set(nil, false)
		settle(6 * time.Minute)
		segs := rg.stored()
		if len(failedAt) != 1 || len(segs) == 0 {
			t.Fatalf("records %v, %d segments", failedAt, len(segs))
		}
		start := failedAt[0].StartMs
		wantGaps(t, rg.gapLog()[:2], base,
			status.Gap{StartMs: start, Cause: status.CauseCameraAuth, Detail: ingest.ReasonAuth},
			status.Gap{StartMs: start, EndMs: segs[0].Start.UnixMilli(), Cause: status.CauseCameraAuth})
	})
}

// The camera's password changes while it records: the open record is
// camera_auth, from the end of the last segment.
func TestGapPasswordBrokenWhileRecording(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg, ctl := ctlRig(t)
		base := time.Now()
		rg.rec.Record(cam("c1", "ctl://cam/main"), 1)
		settle(10 * time.Second)
		ctl.set(ingest.Permanent(ingest.ReasonAuth, errors.New("401")), false)
		brokenAt := time.Now()
		settle(10 * time.Second)
		end, _ := holeAfter(rg.stored(), brokenAt)
		wantGaps(t, rg.gapLog(), base, status.Gap{StartMs: end.UnixMilli(), Cause: status.CauseCameraAuth, Detail: ingest.ReasonAuth})
	})
}

// Packets lost: video resumes at the next keyframe, and the hole is
// rtp_loss.
func TestGapRTPLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg, ctl := ctlRig(t)
		base := time.Now()
		rg.rec.Record(cam("c1", "ctl://cam/main"), 1)
		settle(6 * time.Second)
		ctl.set(nil, true)
		lostAt := time.Now()
		settle(6 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second)
		segs := rg.stored()
		end, resumed := holeAfter(segs, lostAt)
		wantGaps(t, rg.gapLog(), base,
			status.Gap{StartMs: end.UnixMilli(), EndMs: resumed.UnixMilli(), Cause: status.CauseRTPLoss},
			status.Gap{StartMs: segs[len(segs)-1].End().UnixMilli(), Cause: status.CauseNodeHandover})
	})
}

// A new camera record restarts the camera: camera_changed.
func TestGapCameraChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg, ctl := ctlRig(t)
		base := time.Now()
		rg.rec.Record(cam("c1", "ctl://cam/main"), 1)
		settle(6 * time.Second)
		ctl.mu.Lock()
		ctl.delay = 1500 * time.Millisecond // reconnecting takes a while
		ctl.mu.Unlock()
		rg.rec.Record(cam("c1", "ctl://cam/other"), 1)
		editAt := time.Now()
		settle(6 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second)
		segs := rg.stored()
		end, resumed := holeAfter(segs, editAt)
		wantGaps(t, rg.gapLog(), base,
			status.Gap{StartMs: end.UnixMilli(), EndMs: resumed.UnixMilli(), Cause: status.CauseCameraChanged},
			status.Gap{StartMs: segs[len(segs)-1].End().UnixMilli(), Cause: status.CauseNodeHandover})
	})
}

// Where a camera's gap begins when it starts here: the end another node
// stored at a graceful stop (a handover), or, when storage holds a later
// segment that no record follows, that segment's end (the node that
// recorded it died). A stop records the cause Stop is given.
func TestGapStartAndStopCauses(t *testing.T) {
	for _, tc := range []struct {
		name            string
		stored, lastSeg time.Duration // before the start; 0: none
		gapAfter        bool
		stopCause       status.Cause
		wantFrom        time.Duration
		wantCause       status.Cause
		wantStop        status.Cause
	}{
		{name: "handover", stored: 2 * time.Second, wantFrom: 2 * time.Second, wantCause: status.CauseNodeHandover, wantStop: status.CauseNodeHandover},
		{name: "handover, last segment stored", stored: 2 * time.Second, lastSeg: 2 * time.Second, wantFrom: 2 * time.Second,
			wantCause: status.CauseNodeHandover, stopCause: status.CauseCameraRemoved, wantStop: status.CauseCameraRemoved},
		{name: "crash after an older handover", stored: 30 * time.Second, lastSeg: 3 * time.Second, wantFrom: 3 * time.Second,
			wantCause: status.CauseNodeCrash, stopCause: status.CauseCameraBlocked, wantStop: status.CauseCameraBlocked},
		{name: "crash, nothing stored", lastSeg: 3 * time.Second, wantFrom: 3 * time.Second, wantCause: status.CauseNodeCrash, wantStop: status.CauseNodeHandover},
		{name: "a record explains what follows", lastSeg: 3 * time.Second, gapAfter: true, wantStop: status.CauseNodeHandover},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rg, _ := ctlRig(t)
				base := time.Now()
				if tc.stored > 0 {
					rg.ends.ends["c1"] = base.Add(-tc.stored)
				}
				if tc.lastSeg > 0 {
					rg.rec.cfg.Segments = lastSegment{end: base.Add(-tc.lastSeg), gapAfter: tc.gapAfter}
				} else {
					rg.rec.cfg.Segments = lastSegment{}
				}
				stopCause := tc.stopCause
				if stopCause == "" {
					stopCause = status.CauseNodeHandover
				}
				rg.rec.Record(cam("c1", "ctl://cam/main"), 1)
				settle(6 * time.Second)
				rg.rec.Stop("c1", stopCause)
				settle(time.Second)
				segs := rg.stored()
				var want []status.Gap
				if tc.wantCause != "" {
					want = append(want, status.Gap{StartMs: base.Add(-tc.wantFrom).UnixMilli(), EndMs: segs[0].Start.UnixMilli(), Cause: tc.wantCause})
				}
				want = append(want, status.Gap{StartMs: segs[len(segs)-1].End().UnixMilli(), Cause: tc.wantStop})
				wantGaps(t, rg.gapLog(), base, want...)
			})
		})
	}
}

// The pipeline falls behind (a consumer stuck): units are dropped from the
// full queue, and the hole up to the next keyframe is queue_overflow.
func TestGapQueueOverflow(t *testing.T) {
	big, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	rg := newRig(t)
	gate := &gateConsumer{open: make(chan struct{})}
	rg.rec.cfg.Consumers = []stream.ConsumerFactory{func(string) stream.Consumer { return gate }}
	rg.rec.cfg.QueueSize = 16
	returned, more := make(chan struct{}), make(chan struct{})
	rg.rec.cfg.Drivers["fake"] = func(ingest.Camera, ingest.SourceConfig) (ingest.Source, error) {
		return twoRuns{a: big, b: big, n: 100, returned: returned, more: more}, nil
	}
	rg.rec.Record(cam("c1", "fake://two-runs"), 1)
	<-returned
	close(gate.open)
	close(more)
	testenv.WaitFor(t, 20*time.Second, "a queue_overflow record", func() bool {
		for _, g := range rg.gapLog() {
			if g.Cause == status.CauseQueueOverflow && g.EndMs > g.StartMs {
				return true
			}
		}
		return false
	})
}

// lastSegment is a Segments that knows one last segment (none when end is
// zero).
type lastSegment struct {
	end      time.Time
	gapAfter bool
}

func (l lastSegment) LastBefore(context.Context, string, time.Time, time.Duration) (time.Time, bool, error) {
	return l.end, l.gapAfter, nil
}
