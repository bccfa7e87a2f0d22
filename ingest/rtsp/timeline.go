package rtsp

import (
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// unwrapper turns a track's 32-bit RTP timestamps into a continuous count
// of ticks: each step is the signed 32-bit difference to the last one, so
// the wrap at 2^32 is invisible. A step longer than maxStep either way is
// either a hole in the track (frames lost, or dropped until a keyframe
// after a loss, for seconds; an encoder that stalled), counted whole, or a
// jump of the camera's clock: the count then goes on one frame after the
// furthest point it had reached, so what follows (decoding times, the
// session's clock) never sees the jump. The camera's other tracks tell
// which, when one of them had a packet within witnessFresh: the step is a
// hole when it lands within maxStep of where that track stands (a jump of
// the camera's clock moves every track; a hole in one track does not).
// Without such a witness, the arrivals tell: a hole when the time between
// the two packets' arrivals accounts for the step within maxStep, 2^32
// ticks and more included. A hole taken for a jump puts this track behind
// the camera's other tracks by the hole's length for the rest of the
// session. Steps are taken in arrival (decoding) order, in which the
// timestamps of B-frames go back and forth by a few frames: far less than
// maxStep.
type unwrapper struct {
	prev    uint32
	prevAt  time.Time // when prev arrived
	ticks   int64
	maxStep int64
	rate    int

	first   int64 // ticks of the first timestamp
	horizon int64 // the furthest ticks reached
	n       int64 // timestamps counted
}

func newUnwrapper(ts uint32, now time.Time, start int64, rate int) *unwrapper {
	return &unwrapper{prev: ts, prevAt: now, ticks: start, first: start, horizon: start, n: 1,
		maxStep: durationToTicks(ingest.DefaultJumpAfter, rate), rate: rate}
}

// witness says, for a step of a track that would bring its count to c,
// whether the camera's other tracks take it for a hole, and whether any
// could tell (known).
type witness func(c int64) (hole, known bool)

// next counts timestamp ts, arrived at now; w (nil: none) witnesses a
// long step.
func (u *unwrapper) next(ts uint32, now time.Time, w witness) int64 {
	d := int64(int32(ts - u.prev))
	if d > u.maxStep || d < -u.maxStep {
		// The step the arrivals tell (whole turns of 2^32 included), when
		// ts is within maxStep of it.
		e := durationToTicks(now.Sub(u.prevAt), u.rate)
		off := int64(int32(ts - (u.prev + uint32(e))))
		hole := e > 0 && off <= u.maxStep && off >= -u.maxStep
		if hole {
			d = e + off
		}
		if w != nil {
			if h, known := w(u.ticks + d); known {
				hole = h
			}
		}
		if !hole {
			d = u.horizon + u.frame() - u.ticks // a jump
		}
	}
	u.prev, u.prevAt = ts, now
	u.ticks += d
	u.horizon = max(u.horizon, u.ticks)
	u.n++
	return u.ticks
}

// frame is the mean advance per timestamp so far (at least one tick).
func (u *unwrapper) frame() int64 {
	if u.n < 2 {
		return 1
	}
	return max((u.horizon-u.first)/(u.n-1), 1)
}

// timeline puts the tracks of a session on one time axis. The video track
// starts at zero. Another track is placed where the camera's sender
// reports say it belongs, when the camera sends them for both tracks
// (RFC 3550 6.4.1: each report ties an RTP time of its track to the
// camera's clock); until then, where the video stands when its first
// packet arrives: the video's decoding time on arrival, taken from the
// least delayed video frame so far (a large keyframe arrives late; a
// frame is sent at about its decoding time). It follows its own RTP clock
// after that. After its first placeWindow it moves once so that its least
// delayed frame arrived as late as the video's: a sender that gathers
// several audio frames into one packet sends it when its last frame is
// complete, the first one that long late. When the reports of both tracks
// arrive, the track moves once to where they place it, as soon as that
// is within maxReportShift of where arrival times place it then (a video
// that starts seconds late and catches up, its encoder slow at first,
// places it by arrival seconds early until it caught up; a camera whose
// reports disagree by more for good is left on arrival times).
type timeline struct {
	video *unwrapper

	// The least delayed video frame: its arrival less its decoding time
	// (ns on the local clock), and whether there is one.
	leastDelay int64
	haveDelay  bool

	others  map[int]*otherTrack
	reports map[int]senderReport // by track

	// moves counts the moves of other tracks (placement by sender reports
	// or by arrival) on the axis.
	moves int
}

// otherTrack is a track other than the video.
type otherTrack struct {
	u      *unwrapper
	synced bool // placed by sender reports

	// Placement by arrival: in its first placeWindow, the least delay of
	// a frame (its arrival less its time on the axis, ns), and whether
	// that placement is done.
	since  time.Time
	least  int64
	placed bool
}

// placeWindow is how long a track placed by arrival times is watched for
// its least delayed frame, before it is moved there once.
const placeWindow = time.Second

// senderReport is the last RTCP sender report of a track.
type senderReport struct {
	ntp uint64 // the camera's clock, NTP format (RFC 5905)
	rtp uint32 // the track's RTP time at that instant
}

// maxReportShift bounds how far sender reports may place a track from
// where arrival times place it: a camera whose reports are off by more
// (tracks stamped from different clocks) is left on arrival times.
const maxReportShift = 3 * time.Second

// videoTicks unwraps a video timestamp arrived at now.
func (t *timeline) videoTicks(ts uint32, now time.Time) int64 {
	if t.video == nil {
		t.video = newUnwrapper(ts, now, 0, 90000)
		return 0
	}
	return t.video.next(ts, now, func(c int64) (bool, bool) { return t.witness(t.video, c, now) })
}

// witnessFresh is how recently a track's last packet must have come for
// it to witness where the camera's clock stands.
const witnessFresh = time.Second

// witness tells whether count c of track self is a hole, from the camera's
// other tracks that had a packet within witnessFresh of now: a hole when c
// is within maxStep of where one of them stands on the axis.
func (t *timeline) witness(self *unwrapper, c int64, now time.Time) (hole, known bool) {
	check := func(u *unwrapper) {
		if u == nil || u == self || now.Sub(u.prevAt) > witnessFresh {
			return
		}
		known = true
		if d := c - u.ticks*int64(self.rate)/int64(u.rate); d <= self.maxStep && d >= -self.maxStep {
			hole = true
		}
	}
	check(t.video)
	for _, o := range t.others {
		check(o.u)
	}
	return hole, known
}

// videoDecoded notes the decoding time (ticks) of a video frame that
// arrived at now.
func (t *timeline) videoDecoded(dts int64, now time.Time) {
	d := now.UnixNano() - int64(ticksToDuration(dts, 90000))
	if !t.haveDelay || d < t.leastDelay {
		t.leastDelay, t.haveDelay = d, true
	}
}

// started reports whether video has started the axis.
func (t *timeline) started() bool { return t.video != nil && t.haveDelay }

// senderReport notes a sender report of track idx (0: the video).
func (t *timeline) senderReport(idx int, ntp uint64, rtpTime uint32) {
	if t.reports == nil {
		t.reports = map[int]senderReport{}
	}
	t.reports[idx] = senderReport{ntp: ntp, rtp: rtpTime}
}

// reported returns where the sender reports place timestamp ts of track
// idx (clock rate) on the video's axis, in ticks of rate, and whether
// they do: reports of both tracks, and video started.
func (t *timeline) reported(idx int, ts uint32, rate int) (int64, bool) {
	a, okA := t.reports[idx]
	v, okV := t.reports[0]
	if !okA || !okV || t.video == nil {
		return 0, false
	}
	// The camera's clock at ts, then the video's RTP time at that instant.
	at := media.NTPToTime(a.ntp).Add(ticksToDuration(int64(int32(ts-a.rtp)), rate))
	vts := v.rtp + uint32(durationToTicks(at.Sub(media.NTPToTime(v.ntp)), 90000))
	vt := t.video.ticks + int64(int32(vts-t.video.prev))
	return vt * int64(rate) / 90000, true
}

// otherTicks unwraps a timestamp of track idx, whose clock runs at rate.
// Call it only after video started.
func (t *timeline) otherTicks(idx int, ts uint32, rate int, now time.Time) int64 {
	if t.others == nil {
		t.others = map[int]*otherTrack{}
	}
	o := t.others[idx]
	var ticks int64
	if o == nil {
		ticks = durationToTicks(time.Duration(now.UnixNano()-t.leastDelay), rate)
		o = &otherTrack{u: newUnwrapper(ts, now, ticks, rate), since: now, least: t.leastDelay}
		t.others[idx] = o
	} else {
		ticks = o.u.next(ts, now, func(c int64) (bool, bool) { return t.witness(o.u, c, now) })
	}
	if !o.synced {
		// Where arrival times place this packet now: as late as the
		// least delayed video frame so far, which falls when a video
		// that started late catches up (its encoder slow at first).
		arrival := durationToTicks(time.Duration(now.UnixNano()-t.leastDelay), rate)
		if r, ok := t.reported(idx, ts, rate); ok {
			if d := r - arrival; ticksToDuration(max(d, -d), rate) <= maxReportShift {
				o.synced, o.placed = true, true
				if r != ticks {
					o.u.shift(r - ticks)
					t.moves++
				}
				return r
			}
		}
	}
	if !o.placed {
		o.least = min(o.least, now.UnixNano()-int64(ticksToDuration(ticks, rate)))
		if now.Sub(o.since) >= placeWindow {
			o.placed = true
			if d := time.Duration(o.least - t.leastDelay); d < -minPlaceShift || d > minPlaceShift {
				o.u.shift(durationToTicks(d, rate))
				ticks += durationToTicks(d, rate)
				t.moves++
			}
		}
	}
	return ticks
}

// minPlaceShift is the least move of a track placed by arrival times:
// arrivals jitter by a few milliseconds.
const minPlaceShift = 10 * time.Millisecond

// shift moves the count by d ticks.
func (u *unwrapper) shift(d int64) {
	u.ticks += d
	u.horizon += d
	u.first += d
}
