package catalogue

import (
	"math"
	"strings"
)

// Two nodes record one camera at once only while a partition hides them
// from each other (docs/cluster.md, Control-plane outage): storage then
// holds two chains of segments over the same time. Readers take one chain:
// chain keeps, from the segments in start order, a minimum cover of the
// time they record. From the end of what it kept (or, after a hole, the
// start of the first segment), it takes the segment that starts right
// there and reaches furthest; only when none starts there, the one that
// started before and reaches furthest. Every segment inside what it kept
// is skipped. So a node's chain that runs through the overlap is kept
// whole and the other's segments are skipped; where the chain must pass
// from one node's segments to the other's (the first node stopped), the
// segment taken after the switch starts inside the last one kept: that
// part, less than a segment, is the only time left doubled.
//
// Ties go to the segment that starts first, then to the smaller key, so
// every reader picks the same chain.

// chainTouchMs is how far apart two segments of one chain may be and still
// touch (their times are rounded to the millisecond).
const chainTouchMs = 2

// chain picks one chain of segments from segments delivered hour by hour.
type chain struct {
	endMs   int64     // end of the segments kept so far
	pending []Segment // delivered, not decided, in start order
}

func newChain() *chain { return &chain{endMs: math.MinInt64} }

// next takes the next segments in start order, all of them starting before
// horizonMs (the start of the segments not yet delivered), and returns the
// segments kept that no later segment can change, in start order.
func (c *chain) next(segs []Segment, horizonMs int64) []Segment {
	c.pending = append(c.pending, segs...)
	var out []Segment
	for {
		kept := c.pending[:0]
		for _, s := range c.pending {
			if s.EndMs() > c.endMs+chainTouchMs {
				kept = append(kept, s)
			}
		}
		c.pending = kept
		if len(c.pending) == 0 {
			return out
		}
		base := c.endMs
		if first := c.pending[0].StartMs; first > base+chainTouchMs {
			base = first // a hole: the next chain starts here
		}
		if base+chainTouchMs >= horizonMs {
			return out // a segment not delivered yet may start here
		}
		best, touch := -1, -1
		for i, s := range c.pending {
			if s.StartMs > base+chainTouchMs {
				break
			}
			if best < 0 || better(s, c.pending[best]) {
				best = i
			}
			if s.StartMs >= base-chainTouchMs && (touch < 0 || better(s, c.pending[touch])) {
				touch = i
			}
		}
		if touch >= 0 {
			best = touch
		}
		s := c.pending[best]
		c.pending = append(c.pending[:best], c.pending[best+1:]...)
		c.endMs = s.EndMs()
		out = append(out, s)
	}
}

// better reports whether a is taken before b, both starting where the
// chain goes on.
func better(a, b Segment) bool {
	switch {
	case a.EndMs() != b.EndMs():
		return a.EndMs() > b.EndMs()
	case a.StartMs != b.StartMs:
		return a.StartMs < b.StartMs
	}
	return strings.Compare(a.Key, b.Key) < 0
}
