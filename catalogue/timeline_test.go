package catalogue

import (
	"fmt"
	"testing"

	"github.com/vigia/vigia/status"
)

func TestBuildTimeline(t *testing.T) {
	seg := func(s, e int64) Segment { return Segment{StartMs: s, DurMs: e - s} }
	rec := func(s, e int64, c status.Cause) GapRecord {
		d := int64(0)
		if e > 0 {
			d = e - s
		}
		return GapRecord{StartMs: s, DurMs: d, Cause: c}
	}
	const (
		off   = status.CauseCameraOffline
		auth  = status.CauseCameraAuth
		hand  = status.CauseNodeHandover
		crash = status.CauseNodeCrash
		rtp   = status.CauseRTPLoss
		unk   = status.CauseUnknown
		ret   = status.CauseRetention
	)
	for _, tc := range []struct {
		name             string
		from, to, now    int64
		segs             []Segment
		recs             []GapRecord
		retained, inProg int64
		want             string
	}{
		{name: "touching segments make one span, no gap", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 50), seg(51, 100)}, want: "[{0 100}] []"},
		{name: "open record explains up to the next segment", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 20), seg(60, 100)}, recs: []GapRecord{rec(20, 0, off)},
			want: "[{0 20} {60 100}] [{20 60 camera_offline}]"},
		{name: "open record after the last segment explains up to now", from: 0, to: 100, now: 80,
			segs: []Segment{seg(0, 20)}, recs: []GapRecord{rec(20, 0, off)},
			want: "[{0 20}] [{20 80 camera_offline}]"},
		{name: "higher rank wins where records overlap", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 10), seg(90, 100)}, recs: []GapRecord{rec(10, 90, hand), rec(30, 50, off)},
			want: "[{0 10} {90 100}] [{10 30 node_handover} {30 50 camera_offline} {50 90 node_handover}]"},
		{name: "equal rank: the record that starts last", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 10), seg(90, 100)}, recs: []GapRecord{rec(10, 0, off), rec(40, 0, auth), rec(50, 0, off)},
			want: "[{0 10} {90 100}] [{10 40 camera_offline} {40 90 camera_auth}]"},
		{name: "a record 1 ms off the gap's edges (keys rounded) explains all of it", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 10), seg(60, 100)}, recs: []GapRecord{rec(11, 59, off)},
			want: "[{0 10} {60 100}] [{10 60 camera_offline}]"},
		{name: "a gap no record explains", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 10), seg(20, 100)}, recs: []GapRecord{rec(50, 60, rtp)},
			want: "[{0 10} {20 100}] [{10 20 unknown}]"},
		{name: "record clipped to the gap (a merged record spans segments)", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 10), seg(15, 30), seg(33, 100)}, recs: []GapRecord{rec(5, 40, rtp)},
			want: "[{0 10} {15 30} {33 100}] [{10 15 rtp_loss} {30 33 rtp_loss}]"},
		{name: "retention before the retained time", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(40, 100)}, retained: 30,
			want: "[{40 100}] [{0 30 retention} {30 40 unknown}]"},
		{name: "the segment being recorded is not a gap", from: 0, to: 100, now: 95,
			segs: []Segment{seg(0, 80)}, inProg: 20,
			want: "[{0 80}] []"},
		{name: "but a longer stretch is", from: 0, to: 100, now: 95,
			segs: []Segment{seg(0, 60)}, inProg: 20,
			want: "[{0 60}] [{60 95 unknown}]"},
		{name: "crash record from the last segment's end", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 30), seg(45, 100)}, recs: []GapRecord{rec(30, 45, crash)},
			want: "[{0 30} {45 100}] [{30 45 node_crash}]"},
		{name: "nothing up to now, nothing after", from: 0, to: 100, now: 50,
			recs: []GapRecord{rec(10, 0, auth)},
			want: "[] [{0 10 unknown} {10 50 camera_auth}]"},
		{name: "unknown causes in records are ignored", from: 0, to: 100, now: 1000,
			segs: []Segment{seg(0, 10), seg(20, 100)}, recs: []GapRecord{rec(10, 20, "made_up")},
			want: "[{0 10} {20 100}] [{10 20 unknown}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := buildTimeline(tc.from, tc.to, tc.now, tc.segs, tc.recs, tc.retained, tc.inProg)
			got := fmt.Sprintf("%v %v", tl.Recorded, tl.Gaps)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var sum int64
			for _, s := range tl.Recorded {
				sum += s.EndMs - s.StartMs
			}
			if sum != tl.RecordedMs {
				t.Errorf("RecordedMs %d, spans sum to %d", tl.RecordedMs, sum)
			}
		})
	}
}

func TestTimelineRatio(t *testing.T) {
	tl := Timeline{FromMs: 0, ToMs: 100, RecordedMs: 40}
	if r := tl.Ratio(1000); r != 0.4 {
		t.Errorf("ratio %v", r)
	}
	if r := tl.Ratio(50); r != 0.8 {
		t.Errorf("ratio up to now %v", r)
	}
	if r := (Timeline{FromMs: 10, ToMs: 10}).Ratio(100); r != 1 {
		t.Errorf("empty range %v", r)
	}
}
