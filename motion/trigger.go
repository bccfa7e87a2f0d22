package motion

import (
	"math"
	"slices"
)

const (
	baselineFrames = 150  // non-key frames in the baseline (10 s at 15 fps)
	minBaseline    = 30   // frames needed before the trigger may fire
	recentFrames   = 8    // frames averaged for the trigger statistic
	gopPositions   = 64   // positions after a keyframe with their own typical size
	positionRate   = 0.05 // learning rate of the typical size of a position
)

// trigger watches the sizes of non-key frames. Encoders spend more on the
// frames just after a keyframe, so each size is first divided by the
// typical size of its position in the GOP (learnt while quiet). The
// baseline is the median and spread (1.4826 × median absolute deviation)
// of the last baselineFrames quiet ratios; the trigger fires when the mean
// of the last recentFrames ratios passes median + max(k × spread /
// √recentFrames, ratio × median).
type trigger struct {
	pos    int // frames since the last keyframe
	typSz  [gopPositions]float64
	typSet [gopPositions]bool
	global float64 // typical size of any position, for positions not learnt yet

	ring  []float64
	rpos2 int
	dirty int

	median, spread float64

	recent [recentFrames]float64
	rpos   int
	rn     int
	sum    float64

	scratch []float64
}

// keyframe marks the start of a GOP.
func (t *trigger) keyframe() { t.pos = 0 }

// add takes one non-key frame size; learn says whether it may enter the
// baseline (the detector is quiet). It reports whether the trigger fires.
func (t *trigger) add(size int, learn bool, s Settings) bool {
	t.pos++
	p := min(t.pos, gopPositions-1)
	raw := float64(size)
	typ := t.global
	if t.typSet[p] {
		typ = t.typSz[p]
	}
	if typ <= 0 {
		typ = raw
	}
	v := raw / max(typ, 1)
	if t.rn == recentFrames {
		t.sum -= t.recent[t.rpos]
	} else {
		t.rn++
	}
	t.recent[t.rpos] = v
	t.sum += v
	t.rpos = (t.rpos + 1) % recentFrames

	fire := false
	if len(t.ring) >= minBaseline && t.rn == recentFrames {
		if t.dirty > 0 {
			t.stats()
		}
		fire = t.sum/recentFrames > t.threshold(s)
	}
	if learn && !fire {
		t.learn(v)
		if !t.typSet[p] {
			t.typSz[p], t.typSet[p] = raw, true
		} else {
			t.typSz[p] += positionRate * (raw - t.typSz[p])
		}
		if t.global == 0 {
			t.global = raw
		} else {
			t.global += positionRate * (raw - t.global)
		}
	}
	return fire
}

func (t *trigger) threshold(s Settings) float64 {
	byNoise := s.triggerSigmas() * t.spread / math.Sqrt(recentFrames)
	byRatio := s.triggerRatio() * t.median
	return t.median + max(byNoise, byRatio)
}

func (t *trigger) learn(v float64) {
	if len(t.ring) < baselineFrames {
		t.ring = append(t.ring, v)
	} else {
		t.ring[t.rpos2] = v
		t.rpos2 = (t.rpos2 + 1) % baselineFrames
	}
	t.dirty++
	if t.dirty >= 4 || len(t.ring) == minBaseline {
		t.stats()
	}
}

// stats recomputes the median and spread of the baseline.
func (t *trigger) stats() {
	t.dirty = 0
	if len(t.ring) == 0 {
		return
	}
	t.scratch = append(t.scratch[:0], t.ring...)
	slices.Sort(t.scratch)
	t.median = t.scratch[len(t.scratch)/2]
	for i, v := range t.scratch {
		t.scratch[i] = math.Abs(v - t.median)
	}
	slices.Sort(t.scratch)
	t.spread = max(1.4826*t.scratch[len(t.scratch)/2], 0.05*t.median)
}

// rebase makes the recent level the new normal: the scene changed in a
// way that moves the sizes but is not motion. The typical sizes are scaled
// by the recent mean ratio, and the ratios start again from 1.
func (t *trigger) rebase() {
	if t.rn > 0 {
		k := t.sum / float64(t.rn)
		for i := range t.typSz {
			t.typSz[i] *= k
		}
		t.global *= k
	}
	for i := range t.ring {
		t.ring[i] = 1
	}
	for i := 0; i < t.rn; i++ {
		t.recent[i] = 1
	}
	t.sum = float64(t.rn)
	t.dirty = 1
}

// reset forgets everything (a new run of the source).
func (t *trigger) reset() {
	*t = trigger{ring: t.ring[:0], scratch: t.scratch}
}
