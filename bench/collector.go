package bench

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/vigia/vigia/segmenter"
)

// camSegments is what the benchmark keeps of one camera's stored segments:
// aggregates only, so that a soak of hours holds the same memory as a
// minute's run.
type camSegments struct {
	first, last time.Time // earliest start, latest end
	frames      int64
}

// collector receives the stored segments (from the spool's upload workers).
type collector struct {
	target time.Duration // the segment duration

	mu          sync.Mutex
	byCam       map[string]*camSegments
	stored_     int
	bytes       int64
	closing     bool // the recorder is being closed: what is stored now is its shutdown flush
	full, short latencies
}

func newCollector(target time.Duration) *collector {
	return &collector{target: target, byCam: map[string]*camSegments{}}
}

// stored is the app's OnSegmentStored hook.
func (c *collector) stored(seg segmenter.Segment, latency time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.byCam[seg.Camera]
	end := seg.Start.Add(seg.Duration)
	if cs == nil {
		cs = &camSegments{first: seg.Start, last: end}
		c.byCam[seg.Camera] = cs
	}
	if seg.Start.Before(cs.first) {
		cs.first = seg.Start
	}
	if end.After(cs.last) {
		cs.last = end
	}
	cs.frames += int64(seg.Frames)
	c.stored_++
	c.bytes += seg.Size
	// A camera's first segment is staggered (docs/recording.md) and may
	// last half the target; one cut shorter ended at a discontinuity.
	if c.closing || seg.Duration < c.target/2 {
		c.short.add(latency)
	} else {
		c.full.add(latency)
	}
}

// beginClose marks the start of the recorder's shutdown: segments stored
// from now on are its flush of every camera at once (and those queued
// behind it), reported apart from the latency of recording.
func (c *collector) beginClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
}

// count returns the number of segments stored so far.
func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stored_
}

// startUp measures how soon after given each of cameras had its first
// stored segment start.
func (c *collector) startUp(cameras []string, given time.Time) StartUpStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := StartUpStats{Cameras: len(cameras)}
	var d []time.Duration
	for _, id := range cameras {
		if cs := c.byCam[id]; cs != nil {
			d = append(d, cs.first.Sub(given))
		}
	}
	if len(d) == 0 {
		return st
	}
	slices.Sort(d)
	q := func(p int) float64 { return d[(len(d)-1)*p/100].Seconds() }
	st.Recorded = len(d)
	st.FirstSegmentP50S, st.FirstSegmentP90S, st.FirstSegmentMaxS = q(50), q(90), q(100)
	return st
}

// segmentStats summarises the stored segments.
func (c *collector) segmentStats() SegmentStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return SegmentStats{
		Stored: c.stored_, Bytes: c.bytes,
		StoredFull: c.full.n, StoredShort: c.short.n,
		LatencyP50Ms: ms(c.full.percentile(50)), LatencyP99Ms: ms(c.full.percentile(99)),
		LatencyMaxMs:      ms(c.full.percentile(100)),
		ShortLatencyP50Ms: ms(c.short.percentile(50)), ShortLatencyMaxMs: ms(c.short.percentile(100)),
	}
}

// latencies is a histogram of durations: 1 ms buckets up to 10 s, 100 ms
// buckets up to an hour, one bucket beyond. Bucket i holds the durations
// over the previous bucket's edge up to its own edge. Its memory is fixed
// however many durations it counts; a percentile is the edge of its bucket
// (the exact value for the largest).
type latencies struct {
	n      int
	counts []uint32
	max    time.Duration
}

const (
	latFine       = 10_000 // ms: 1 ms buckets up to here
	latCoarseStep = 100    // ms per bucket above
	latBuckets    = latFine + (3_600_000-latFine)/latCoarseStep + 2
)

func latBucket(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	m := int((d + time.Millisecond - 1) / time.Millisecond) // ms, rounded up
	if m <= latFine {
		return m
	}
	k := (m - latFine + latCoarseStep - 1) / latCoarseStep
	return min(latFine+k, latBuckets-1)
}

// latEdge is the upper edge of bucket i.
func latEdge(i int) time.Duration {
	if i <= latFine {
		return time.Duration(i) * time.Millisecond
	}
	return time.Duration(latFine+(i-latFine)*latCoarseStep) * time.Millisecond
}

func (l *latencies) add(d time.Duration) {
	if l.counts == nil {
		l.counts = make([]uint32, latBuckets)
	}
	l.counts[latBucket(d)]++
	l.n++
	l.max = max(l.max, d)
}

// percentile returns the nearest-rank p-th percentile (0 when empty).
func (l *latencies) percentile(p float64) time.Duration {
	if l.n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(l.n)))
	rank = max(1, min(rank, l.n))
	seen := 0
	for i, c := range l.counts {
		seen += int(c)
		if seen >= rank {
			if i == latBuckets-1 { // beyond an hour: no edge
				return l.max
			}
			return min(latEdge(i), l.max)
		}
	}
	return l.max
}

// frameStats counts the frames lost. For each camera, the stored segments
// span from the first one's start to the last one's end; at fps, that span
// held round(span × fps) frames, and what the segments do not hold was lost
// (inside a segment, or in a gap between segments after a reconnect or a
// queue overflow). A camera with no stored segment lost every frame of
// recordWindow. Frames before the first keyframe of a connection are not
// part of any span and are not counted here (the recorder counts them as
// dropped with reason no_keyframe).
func (c *collector) frameStats(cameras []string, fps float64, recordWindow time.Duration) FrameStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st FrameStats
	for _, cam := range cameras {
		cs := c.byCam[cam]
		if cs == nil {
			exp := int64(math.Round(recordWindow.Seconds() * fps))
			st.Expected += exp
			st.Lost += exp
			continue
		}
		st.CamerasRecorded++
		exp := int64(math.Round(cs.last.Sub(cs.first).Seconds() * fps))
		st.Expected += exp
		st.Stored += cs.frames
		if exp > cs.frames {
			st.Lost += exp - cs.frames
		}
	}
	if st.Expected > 0 {
		st.LostPercent = 100 * float64(st.Lost) / float64(st.Expected)
	}
	return st
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
