package transcode

import "time"

// Keeping audio in step with the input's times. The encoder takes a
// continuous run of samples; the units' times say where each unit's
// samples belong. A unit that starts later than the samples before it end
// (packets lost, a camera clock slower than its stated rate) gets silence
// in front; one that starts earlier loses its overlapping samples. Small
// differences are let be, large gaps restart the count.
const (
	// tolerance is how far a unit's time may be from where the samples
	// before it end before samples are added or dropped: more than the
	// rounding of millisecond timestamps, less than a packet.
	tolerance = 10 * time.Millisecond

	// maxFill is the longest gap filled with silence. A longer one (audio
	// that stopped and came back) restarts the count at the unit's time,
	// and the AAC frame before it lasts until then.
	maxFill = time.Second
)

// anchor ties a sample index to its time.
type anchor struct {
	sample int64
	pts    time.Duration
	wall   time.Time
}

// timing counts the samples that enter the encoder and gives each its
// time: from the last anchor at or before it, at the AAC rate.
type timing struct {
	rate    int
	next    int64 // index of the next sample to enter
	anchors []anchor
}

// place returns where a unit of n samples with times pts and wall goes:
// the silence to add before it, and the samples to drop from its start.
// The first unit anchors the count.
func (t *timing) place(pts time.Duration, wall time.Time, n int) (silence, skip int) {
	if len(t.anchors) == 0 {
		t.anchors = append(t.anchors, anchor{t.next, pts, wall})
		return 0, 0
	}
	expected, _ := t.at(t.next)
	switch d := pts - expected; {
	case d > maxFill:
		t.anchors = append(t.anchors, anchor{t.next, pts, wall})
	case d > tolerance:
		silence = durationSamples(d, t.rate)
	case d < -maxFill:
		skip = n
	case d < -tolerance:
		skip = min(n, durationSamples(-d, t.rate))
	}
	return silence, skip
}

// add counts n samples entering the encoder.
func (t *timing) add(n int) { t.next += int64(n) }

// at returns the times of sample s (before the first anchor: from it,
// backwards). Call it after the first place.
func (t *timing) at(s int64) (time.Duration, time.Time) {
	a := t.anchors[0]
	for _, x := range t.anchors[1:] {
		if x.sample > s {
			break
		}
		a = x
	}
	off := samplesDuration(s-a.sample, t.rate)
	wall := a.wall
	if !wall.IsZero() {
		wall = wall.Add(off)
	}
	return a.pts + off, wall
}

// forget drops the anchors no sample from s on needs.
func (t *timing) forget(s int64) {
	i := 0
	for i+1 < len(t.anchors) && t.anchors[i+1].sample <= s {
		i++
	}
	if i > 0 {
		t.anchors = t.anchors[:copy(t.anchors, t.anchors[i:])]
	}
}

func samplesDuration(n int64, rate int) time.Duration {
	sec := n / int64(rate)
	rem := n % int64(rate)
	return time.Duration(sec)*time.Second + time.Duration(rem)*time.Second/time.Duration(rate)
}

func durationSamples(d time.Duration, rate int) int {
	return int((int64(d)*int64(rate) + int64(time.Second)/2) / int64(time.Second))
}
