package bench

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/vigia/vigia/segmenter"
)

// storedSegment is what the benchmark keeps of a stored segment.
type storedSegment struct {
	start    time.Time
	duration time.Duration
	frames   int
	size     int64
	latency  time.Duration
	short    bool // shorter than the target: cut by shutdown or a discontinuity
}

// collector receives the stored segments (from the spool's upload workers).
type collector struct {
	target time.Duration // the segment duration

	mu    sync.Mutex
	byCam map[string][]storedSegment
}

func newCollector(target time.Duration) *collector {
	return &collector{target: target, byCam: map[string][]storedSegment{}}
}

// stored is the app's OnSegmentStored hook.
func (c *collector) stored(seg segmenter.Segment, latency time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byCam[seg.Camera] = append(c.byCam[seg.Camera], storedSegment{
		start: seg.Start, duration: seg.Duration, frames: seg.Frames, size: seg.Size,
		latency: latency, short: seg.Duration < c.target,
	})
}

// count returns the number of segments stored so far.
func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.byCam {
		n += len(s)
	}
	return n
}

// segmentStats summarises the stored segments.
func (c *collector) segmentStats() SegmentStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st SegmentStats
	var full, short []time.Duration
	for _, segs := range c.byCam {
		for _, s := range segs {
			st.Stored++
			st.Bytes += s.size
			if s.short {
				short = append(short, s.latency)
			} else {
				full = append(full, s.latency)
			}
		}
	}
	st.StoredFull, st.StoredShort = len(full), len(short)
	st.LatencyP50Ms = ms(percentile(full, 50))
	st.LatencyP99Ms = ms(percentile(full, 99))
	st.LatencyMaxMs = ms(percentile(full, 100))
	st.ShortLatencyP50Ms = ms(percentile(short, 50))
	st.ShortLatencyMaxMs = ms(percentile(short, 100))
	return st
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
		segs := c.byCam[cam]
		if len(segs) == 0 {
			exp := int64(math.Round(recordWindow.Seconds() * fps))
			st.Expected += exp
			st.Lost += exp
			continue
		}
		st.CamerasRecorded++
		first, last := segs[0].start, segs[0].start.Add(segs[0].duration)
		var frames int64
		for _, s := range segs {
			frames += int64(s.frames)
			if s.start.Before(first) {
				first = s.start
			}
			if end := s.start.Add(s.duration); end.After(last) {
				last = end
			}
		}
		exp := int64(math.Round(last.Sub(first).Seconds() * fps))
		st.Expected += exp
		st.Stored += frames
		if exp > frames {
			st.Lost += exp - frames
		}
	}
	if st.Expected > 0 {
		st.LostPercent = 100 * float64(st.Lost) / float64(st.Expected)
	}
	return st
}

// percentile returns the nearest-rank p-th percentile of d (0 when empty).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
