package storage

import "time"

// The recording layout: what the writer of recording segments promises and
// every reader of the "rec/" keys relies on. The segmenter, which may not
// import storage, keeps its own copy of both, checked equal by its tests.

// TouchToleranceMs is how far a recording segment may start before the end
// of the previous one and still count as touching it rather than
// overlapping it, or start after that end and still count as following it
// without a gap: keys round start and duration down to the millisecond, so a
// chained segment can seem to start 1 ms early or late.
const TouchToleranceMs = 2

// MaxSegmentDuration returns the longest recording segment written for the
// target segment duration (recording.segment_duration; one minute when
// target is not above 0): the writer cuts at the first keyframe at or after
// target, and at the latest at target plus the larger of target and one
// minute. A segment covering a time t therefore starts after t minus this,
// which is how far readers of the "rec/" keys look back.
func MaxSegmentDuration(target time.Duration) time.Duration {
	if target <= 0 {
		target = time.Minute
	}
	return target + max(target, time.Minute)
}
