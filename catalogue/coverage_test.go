package catalogue

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

func TestAddSpan(t *testing.T) {
	var s []Span
	for _, add := range []Span{{100, 200}, {300, 400}, {200, 250}, {500, 600}, {250, 300}, {0, 50}, {580, 700}, {10, 20}} {
		s = addSpan(s, add)
	}
	if got := fmt.Sprint(s); got != "[{0 50} {100 400} {500 700}]" {
		t.Errorf("spans %s", got)
	}
	if n := covered(s, 40, 550); n != 10+300+50 {
		t.Errorf("covered %d", n)
	}
}

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestCoverage(t *testing.T) {
	st := memStore(t)
	ck := &clock{t: at(12, 0, 0)}
	cat := New(Config{Store: st, MaxSegment: 2 * time.Minute, Now: ck.now})
	lag := 150 * time.Second
	// A day and more of one-minute segments, but for 6 minutes from 11:20
	// and 30 minutes from 09:00.
	for m := at(12, 0, 0).Add(-26 * time.Hour); m.Before(at(11, 58, 0)); m = m.Add(time.Minute) {
		if (!m.Before(at(11, 20, 0)) && m.Before(at(11, 26, 0))) || (!m.Before(at(9, 0, 0)) && m.Before(at(9, 30, 0))) {
			continue
		}
		putSegment(t, st, "cam", m, time.Minute, 800)
	}
	cov := NewCoverage(cat)
	if _, ok := cov.Ratios("cam"); ok {
		t.Fatal("ratios before the history is loaded")
	}
	if err := cov.Update(context.Background(), []string{"cam"}); err != nil {
		t.Fatal(err)
	}
	r, ok := cov.Ratios("cam")
	// The window ends at the last segment's end (11:58), later than now - lag.
	wantHour := float64(60-6) / 60
	wantDay := float64(24*60-36) / (24 * 60)
	if !ok || math.Abs(r.Hour-wantHour) > 1e-9 || math.Abs(r.Day-wantDay) > 1e-9 {
		t.Fatalf("ratios %+v %v, want hour %.4f day %.4f", r, ok, wantHour, wantDay)
	}

	// The camera stops recording: five minutes later the window ends at
	// now - lag, and the missing time counts.
	ck.t = at(12, 5, 0)
	if err := cov.Update(context.Background(), []string{"cam"}); err != nil {
		t.Fatal(err)
	}
	r, _ = cov.Ratios("cam")
	end := at(12, 5, 0).Add(-lag)
	missing := end.Sub(at(11, 58, 0)) + 6*time.Minute
	if want := 1 - float64(missing)/float64(time.Hour); math.Abs(r.Hour-want) > 1e-9 {
		t.Errorf("hour ratio %.5f after it stopped, want %.5f", r.Hour, want)
	}

	// A segment another node uploads late into the 11:20 gap is found when
	// the recent hours are listed again.
	putSegment(t, st, "cam", at(11, 20, 0), 6*time.Minute, 800)
	ck.t = at(12, 11, 0)
	if err := cov.Update(context.Background(), []string{"cam"}); err != nil {
		t.Fatal(err)
	}
	r, _ = cov.Ratios("cam")
	end = at(12, 11, 0).Add(-lag)
	if want := 1 - float64(end.Sub(at(11, 58, 0)))/float64(time.Hour); math.Abs(r.Hour-want) > 1e-9 {
		t.Errorf("hour ratio %.5f after the late upload, want %.5f", r.Hour, want)
	}
	// Segments the node stores count at once.
	cov.Stored("cam", ms(at(11, 58, 0)), ms(end))
	if r, _ = cov.Ratios("cam"); r.Hour != 1 {
		t.Errorf("hour ratio %.5f with every minute stored, want 1", r.Hour)
	}

	// A camera new to the node with nothing stored: judged from when the
	// node began tracking it, once that is a minute old.
	if err := cov.Update(context.Background(), []string{"cam", "new"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := cov.Ratios("new"); ok {
		t.Error("ratios of a camera tracked for no time")
	}
	ck.t = ck.t.Add(lag + 10*time.Minute)
	if r, ok := cov.Ratios("new"); !ok || r.Hour != 0 || r.Day != 0 {
		t.Errorf("a camera that never recorded: %+v %v, want 0", r, ok)
	}
	// Cameras not given are forgotten.
	if err := cov.Update(context.Background(), []string{"new"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := cov.Ratios("cam"); ok {
		t.Error("a camera no longer recorded here is still tracked")
	}
}
