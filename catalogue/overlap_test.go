package catalogue

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// seg is a segment named name over [startMs, endMs).
func seg(name string, startMs, endMs int64) Segment {
	return Segment{Key: name, StartMs: startMs, DurMs: endMs - startMs}
}

func keysOf(segs []Segment) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s.Key
	}
	return out
}

// chainOf runs chain over segs split into hours of hourMs.
func chainOf(segs []Segment, hourMs int64) []Segment {
	slices.SortFunc(segs, func(a, b Segment) int {
		if a.StartMs != b.StartMs {
			return int(a.StartMs - b.StartMs)
		}
		return 0
	})
	c := newChain()
	var out []Segment
	for h := int64(0); ; h += hourMs {
		var in []Segment
		for _, s := range segs {
			if s.StartMs >= h && s.StartMs < h+hourMs {
				in = append(in, s)
			}
		}
		horizon := h + hourMs
		last := true
		for _, s := range segs {
			if s.StartMs >= horizon {
				last = false
			}
		}
		if last {
			horizon = 1 << 62
		}
		out = append(out, c.next(in, horizon)...)
		if last {
			return out
		}
	}
}

// run returns a node's chain of n segments of durMs from startMs.
func run(node string, startMs, durMs int64, n int) []Segment {
	var out []Segment
	for i := range n {
		s := startMs + int64(i)*durMs
		out = append(out, seg(fmt.Sprintf("%s%d", node, i), s, s+durMs))
	}
	return out
}

func TestChain(t *testing.T) {
	for _, tc := range []struct {
		name string
		segs []Segment
		hour int64
		want []string
	}{
		{"one chain", run("a", 0, 2000, 3), 1 << 40, []string{"a0", "a1", "a2"}},
		{"a hole is kept as a hole", []Segment{seg("a0", 0, 2000), seg("a1", 5000, 7000)}, 1 << 40, []string{"a0", "a1"}},
		{
			"a partition: the node that ran through keeps its chain, the other's is skipped",
			append(run("a", 0, 2000, 10), run("b", 3300, 2000, 6)...), 1 << 40,
			[]string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"},
		},
		{
			"the same across hour folders",
			append(run("a", 0, 2000, 10), run("b", 3300, 2000, 6)...), 5000,
			[]string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"},
		},
		{
			"one node stops, the other goes on: one switch",
			append(run("a", 0, 2000, 5), run("b", 3300, 2000, 6)...), 1 << 40,
			[]string{"a0", "a1", "a2", "a3", "a4", "b3", "b4", "b5"},
		},
		{
			"equal segments: the smaller key",
			[]Segment{seg("b", 0, 2000), seg("a", 0, 2000), seg("c", 2000, 4000)}, 1 << 40,
			[]string{"a", "c"},
		},
		{
			"a longer segment over two short ones",
			[]Segment{seg("a0", 0, 1000), seg("a1", 1000, 2000), seg("b", 0, 2000), seg("a2", 2000, 3000)}, 1 << 40,
			[]string{"b", "a2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keysOf(chainOf(tc.segs, tc.hour))
			if !slices.Equal(got, tc.want) {
				t.Errorf("chain = %v, want %v", got, tc.want)
			}
		})
	}
}

// Segments stored by two nodes over the same minute (a partition) read as
// one chain: every reader of Range (recordings, playlists, export,
// snapshots, the timeline) sees no instant twice and none missing.
func TestOverlappingSegmentsReadAsOneChain(t *testing.T) {
	st := memStore(t)
	c := New(Config{Store: st, MaxSegment: time.Minute})
	base := at(10, 59, 0)
	var want []string
	// Node a records 10:59:00 to 11:01:00 in 2 s segments; node b,
	// which took the camera during a partition, 10:59:31.3 to 11:00:35.3.
	for i := range 60 {
		want = append(want, putSegment(t, st, "cam", base.Add(time.Duration(i)*2*time.Second), 2*time.Second, 0))
	}
	for i := range 32 {
		putSegment(t, st, "cam", base.Add(31300*time.Millisecond+time.Duration(i)*2*time.Second), 2*time.Second, 0)
	}
	ctx := context.Background()
	segs, err := c.Segments(ctx, "cam", base, base.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(segs); !slices.Equal(got, want) {
		t.Fatalf("segments:\n%v\nwant node a's chain:\n%v", got, want)
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].StartMs != segs[i-1].EndMs() {
			t.Errorf("%s does not follow %s", segs[i].Key, segs[i-1].Key)
		}
	}
	s, err := c.SegmentAt(ctx, "cam", base.Add(40*time.Second))
	if err != nil || s.Key != want[20] {
		t.Errorf("SegmentAt = %s, %v; want %s", s.Key, err, want[20])
	}
	tl, err := c.Timeline(ctx, "cam", base, base.Add(2*time.Minute), TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Ratio(base.Add(2*time.Minute).UnixMilli()) < 0.999 {
		t.Errorf("timeline: %+v", tl)
	}
}

// The other node's first segment, longer and starting just before the end
// of the chain, does not pull the chain over to it.
func TestChainStaysOnATouchingSegment(t *testing.T) {
	segs := append(run("a", 0, 2000, 10), seg("b0", 1983, 5983), seg("b1", 5983, 7983), seg("b2", 7983, 9049))
	got := keysOf(chainOf(segs, 1<<40))
	if want := keysOf(run("a", 0, 2000, 10)); !slices.Equal(got, want) {
		t.Errorf("chain = %v, want %v", got, want)
	}
}
