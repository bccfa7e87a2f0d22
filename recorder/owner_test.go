package recorder

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/status"
)

func settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestRecordStartsAndStopStoresTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		rg.rec.Record(cam("c1", "rtsp://cam/main"), 7)
		settle(10 * time.Second)
		if s := rg.status("c1"); s.Code != status.Online || s.Width != 1280 {
			t.Fatalf("status %+v, want ONLINE 1280 wide", s)
		}
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second) // uploads
		segs := rg.stored()
		if len(segs) < 2 {
			t.Fatalf("%d segments stored, want at least 2", len(segs))
		}
		last := segs[len(segs)-1]
		end, ok := rg.ends.end("c1")
		if !ok || !end.Equal(last.Start.Add(last.Duration)) {
			t.Errorf("stored end %v (%v), want the last segment's end %v", end, ok, last.Start.Add(last.Duration))
		}
		if got := rg.rec.Cameras(); len(got) != 0 {
			t.Errorf("cameras running after Stop: %v", got)
		}
	})
}

// A camera that fails for bad credentials is ERRO PERMANENTE; an edit with
// the right password restarts it at once.
func TestEditFixesAWrongPassword(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		rg.rec.Record(cam("c1", "rtsp://u:wrong@cam/main"), 1)
		settle(5 * time.Second)
		if s := rg.status("c1"); s.Code != status.Permanent {
			t.Fatalf("status %v with a wrong password, want ERRO PERMANENTE", s.Code)
		}
		rg.rec.Record(cam("c1", "rtsp://u:right@cam/main"), 1)
		settle(2 * time.Second)
		if s := rg.status("c1"); s.Code != status.Online {
			t.Errorf("status %v 2 s after the password was fixed, want ONLINE", s.Code)
		}
		if d := rg.dialed(); d[len(d)-1] != "rtsp://u:right@cam/main" {
			t.Errorf("last dial %q, want the fixed URL", d[len(d)-1])
		}
	})
}

// An edit of a recorded setting restarts the camera: the segment is
// finished, and the next run starts no segment before its end.
func TestEditOfARecordedSettingRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		rg.rec.Record(cam("c1", "rtsp://cam/main"), 1)
		settle(6 * time.Second)
		rg.rec.Record(cam("c1", "rtsp://cam/small"), 1)
		settle(2 * time.Second)
		if s := rg.status("c1"); s.Width != 640 {
			t.Fatalf("width %d after the stream changed, want 640", s.Width)
		}
		settle(8 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second) // uploads
		segs := rg.stored()
		var before, after int
		for i, s := range segs {
			if s.Width == 1280 {
				before++
			} else {
				after++
			}
			if i > 0 && s.Start.Before(segs[i-1].Start.Add(segs[i-1].Duration)) {
				t.Errorf("segment %d starts %v before the end of the one before", i, segs[i-1].Start.Add(segs[i-1].Duration).Sub(s.Start))
			}
		}
		if before == 0 || after == 0 {
			t.Errorf("%d segments of the old stream and %d of the new, want both", before, after)
		}
	})
}

// An edit that changes nothing recorded (the plan, history_days) does not
// restart the camera: no new connection, no gap; resolution_error follows
// the plan.
func TestEditOfNothingRecordedKeepsRecording(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		c := cam("c1", "rtsp://cam/main")
		rg.rec.Record(c, 1)
		settle(3 * time.Second)
		c.Width, c.Height = 640, 360
		c.HistoryDays = 30
		rg.rec.Record(c, 1)
		settle(time.Second)
		if d := rg.dialed(); len(d) != 1 {
			t.Errorf("camera dialled %d times, want once (no restart)", len(d))
		}
		if s := rg.status("c1"); !s.ResolutionError {
			t.Error("resolution_error not set for a 1280x720 picture on a 640x360 plan")
		}
		if got, _ := rg.rec.Camera("c1"); got.HistoryDays != 30 {
			t.Errorf("history_days in effect %d, want 30", got.HistoryDays)
		}
		c.Width, c.Height = 1920, 1080
		rg.rec.Record(c, 1)
		settle(time.Second)
		if s := rg.status("c1"); s.ResolutionError {
			t.Error("resolution_error still set after the plan grew")
		}
		settle(8 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second) // uploads
		segs := rg.stored()
		for i := 1; i < len(segs); i++ {
			if gap := segs[i].Start.Sub(segs[i-1].Start.Add(segs[i-1].Duration)); gap != 0 {
				t.Errorf("gap of %v between segments %d and %d", gap, i-1, i)
			}
		}
	})
}

// A camera starting on a node follows the end its previous node stored;
// an end too far ahead of the clock is ignored.
func TestStartFollowsTheStoredEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ahead  time.Duration
		follow bool
	}{
		{"a few seconds ahead", 5 * time.Second, true},
		{"a minute ahead", time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rg := newRig(t)
				end := time.Now().Add(tc.ahead)
				rg.ends.ends["c1"] = end
				rg.rec.Record(cam("c1", "rtsp://cam/main"), 1)
				settle(20 * time.Second)
				rg.rec.Stop("c1", status.CauseNodeHandover)
				settle(time.Second) // uploads
				segs := rg.stored()
				if len(segs) == 0 {
					t.Fatal("nothing stored")
				}
				starts := !segs[0].Start.Before(end)
				if starts != tc.follow {
					t.Errorf("first segment at %v, stored end %v: followed %v, want %v", segs[0].Start, end, starts, tc.follow)
				}
			})
		})
	}
}

// A camera stopped while its start waits for the stored end never starts.
func TestStopWhileStarting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		release := make(chan struct{})
		rg.ends.get = func() { <-release }
		rg.rec.Record(cam("c1", "rtsp://cam/main"), 1)
		settle(100 * time.Millisecond)
		stopped := make(chan struct{})
		go func() {
			rg.rec.Stop("c1", status.CauseNodeHandover)
			settle(time.Second) // uploads
			close(stopped)
		}()
		settle(100 * time.Millisecond)
		close(release)
		<-stopped
		rg.mu.Lock()
		runs := rg.runs
		rg.mu.Unlock()
		if runs != 0 {
			t.Errorf("%d runs started for a camera stopped while starting", runs)
		}
		if got := rg.rec.Cameras(); len(got) != 0 {
			t.Errorf("cameras left: %v", got)
		}
	})
}

// A record that cannot be resolved is ERRO PERMANENTE until it changes.
func TestUnresolvableRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		rg.rec.Record(cam("c1", "unsealable"), 1)
		settle(time.Second)
		if s := rg.status("c1"); s.Code != status.Permanent || s.LastError == "" {
			t.Errorf("status %+v, want ERRO PERMANENTE with the reason", s)
		}
		rg.rec.Record(cam("c1", "rtsp://cam/main"), 1)
		settle(2 * time.Second)
		if s := rg.status("c1"); s.Code != status.Online {
			t.Errorf("status %v after a good record, want ONLINE", s.Code)
		}
	})
}

// Stop then Record, as a fenced camera whose lease is renewed again: the
// camera stops, stores its end, and starts again after it.
func TestStopThenRecordAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := newRig(t)
		rg.rec.Record(cam("c1", "rtsp://cam/main"), 1)
		settle(5 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second) // uploads
		end, _ := rg.ends.end("c1")
		rg.ends.mu.Lock()
		delete(rg.ends.ends, "c1") // the store lost it: the node's own memory holds
		rg.ends.mu.Unlock()
		rg.rec.Record(cam("c1", "rtsp://cam/main/late"), 2)
		settle(10 * time.Second)
		rg.rec.Stop("c1", status.CauseNodeHandover)
		settle(time.Second) // uploads
		segs := rg.stored()
		for _, s := range segs {
			if s.Start.Before(end) && s.Start.Add(s.Duration).After(end) {
				t.Errorf("segment %v..%v overlaps the end %v of the run before", s.Start, s.Start.Add(s.Duration), end)
			}
		}
		if d := rg.dialed(); len(d) != 2 {
			t.Errorf("dialled %d times, want 2", len(d))
		}
	})
}
