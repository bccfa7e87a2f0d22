package motion

import (
	"context"
	"image"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

const (
	analysisWidth = 160              // width of the luma pictures compared
	lookFor       = 4 * time.Second  // keyframes checked after a trigger before giving up
	firstCheck    = 2 * time.Second  // keyframe checks of an event: first interval
	maxCheck      = 8 * time.Second  // ... doubling up to this while motion goes on
	maxGOP        = 300              // frames kept since the last keyframe for catching up
	freshFor      = 10 * time.Second // a picture analysed this recently is a good reference
	imageWidth    = 320              // width of event images
	imageQuality  = 80
)

type state int

const (
	idle    state = iota // trigger only, nothing decoded
	looking              // triggered, no motion confirmed yet
	active               // an event is open
)

// Detector finds motion events in one camera's video units. It is
// synchronous and not safe for concurrent use; Service runs one per camera
// off the recording path.
//
// It decodes only when the trigger fires: once the frames since the last
// keyframe (to compare the picture at the trigger with that keyframe),
// then keyframes alone, every 2 s of media time at first and less often
// (up to every 8 s) while the motion goes on; between them the trigger
// keeps the event open.
//
// It keeps no units: for each frame since the last keyframe, its time,
// size and where the segmenter stored it (media.Unit.Stored), about 100
// bytes; the frames a look decodes are read back from the spool file then.
// Only units that were not stored are copied. Decoding happens in a
// decoder process (dec), which returns only what the analysis needs: the
// luma at 160 pixels wide and, while an event lacks one, its image.
type Detector struct {
	camera string
	set    Settings
	codec  media.Codec
	dec    Decoder

	trig  trigger
	bg    background
	image []byte // JPEG of the last picture analysed, when it was asked for

	gop      []frame // frames since the last keyframe, keyframe first
	gopBroke bool    // the GOP outgrew maxGOP or units were lost

	state     state
	lookStart time.Time // first trigger of the look
	nextCheck time.Time // next keyframe to analyse during an event
	every     time.Duration
	doubt     bool // the last keyframe checked did not confirm
	lastTime  time.Time
	analysed  time.Time // media time of the last picture analysed

	ev *Event // open event

	// Counters, for metrics.
	looks      uint64
	decoded    uint64
	errors     uint64
	unreadable uint64        // looks and keyframe checks given up: a frame could not be read back
	cpu        time.Duration // the decoder processes' CPU time for this detector
}

// NewDetector returns a Detector for camera with settings s (zero fields
// take their defaults), decoding through dec.
func NewDetector(camera string, s Settings, dec Decoder) *Detector {
	return &Detector{camera: camera, set: s.withDefaults(), dec: dec}
}

// SetCodec starts a new run of the source with video codec c. An open
// event is finished and returned.
func (d *Detector) SetCodec(c media.Codec) []Event {
	out := d.finish()
	d.stop()
	d.bg.reset()
	d.analysed = time.Time{}
	d.codec = c
	d.trig.reset()
	d.dropGOP()
	d.gopBroke = false
	return out
}

// Gap says that units were lost: the frames before the next keyframe
// cannot be decoded.
func (d *Detector) Gap() {
	d.dropGOP()
	d.gopBroke = true
}

// dropGOP empties the GOP, letting go of what its frames hold.
func (d *Detector) dropGOP() {
	clear(d.gop)
	d.gop = d.gop[:0]
}

// keeps reports whether the next frame joins the GOP kept for a look.
func (d *Detector) keeps(key bool) bool {
	return key || !d.gopBroke && len(d.gop) > 0 && len(d.gop) < maxGOP
}

// Close finishes an open event.
func (d *Detector) Close() []Event {
	out := d.finish()
	d.stop()
	return out
}

// Unit takes the next video unit (in decoding order) and returns the
// events that ended with it. It keeps nothing of u's memory: a frame kept
// for a later look is read back from where the segmenter stored it
// (u.Stored), or copied when u was not stored.
func (d *Detector) Unit(u *media.Unit) []Event {
	if d.codec == "" || len(u.NALUs) == 0 {
		return nil
	}
	return d.frame(newFrame(u, d.keeps(u.Key)))
}

// frame takes the next video frame (in decoding order) and returns the
// events that ended with it.
func (d *Detector) frame(f frame) []Event {
	if d.codec == "" {
		return nil
	}
	t := f.t
	if t.IsZero() {
		t = d.lastTime
	}
	d.lastTime = t

	switch {
	case f.key:
		d.dropGOP()
		d.gop = append(d.gop, f)
		d.gopBroke = false
	case d.keeps(false):
		d.gop = append(d.gop, f)
	case !d.gopBroke && len(d.gop) > 0: // outgrew maxGOP
		d.dropGOP()
		d.gopBroke = true
	}

	fired := false
	if f.key {
		d.trig.keyframe()
	} else {
		fired = d.trig.add(f.size, d.state == idle, d.set)
	}

	var out []Event
	switch d.state {
	case idle:
		if fired {
			d.looks++
			d.state, d.lookStart = looking, t
			if d.look(t) {
				d.open(t)
			}
		}
	case looking:
		if f.key && d.analyseKey(&f, t) {
			d.open(t)
		} else if f.key && t.Sub(d.lookStart) >= lookFor {
			// Triggered but nothing moves: the sizes changed for another
			// reason (encoder, lighting); take them as the new baseline.
			d.stop()
			d.trig.rebase()
		}
	case active:
		if fired && !d.doubt {
			d.ev.End = t
		}
		if f.key && !t.Before(d.nextCheck) {
			if d.analyseKey(&f, t) {
				d.ev.End, d.doubt = t, false
				d.every = min(2*d.every, maxCheck)
			} else {
				d.doubt, d.every = true, firstCheck
			}
			d.nextCheck = t.Add(d.every - d.every/8)
		}
		// The event ends Hold after the last motion once a keyframe check
		// failed; while checks confirm, it waits for the next one.
		switch {
		case d.doubt && t.Sub(d.ev.End) > d.set.Hold || t.Sub(d.ev.End) > d.every+d.set.Hold:
			out = append(out, d.finish()...)
			d.stop()
		case d.ev.End.Sub(d.ev.Start) >= d.set.MaxDuration:
			// The next event's image is the next picture that confirms
			// motion (analyse asks for it while the event has none).
			end := d.ev.End
			out = append(out, d.finish()...)
			d.ev = &Event{ID: EventID(d.camera, end), Camera: d.camera, Start: end, End: end, Image: d.takeImage()}
		}
	}
	return out
}

// open starts an event confirmed at t; it began at the trigger.
func (d *Detector) open(t time.Time) {
	d.state = active
	d.ev = &Event{ID: EventID(d.camera, d.lookStart), Camera: d.camera, Start: d.lookStart, End: t, Area: d.bg.lastArea, Image: d.takeImage()}
	d.every, d.doubt = firstCheck, false
	d.nextCheck = t.Add(firstCheck - firstCheck/8)
}

// look starts a look at a trigger at t. When a picture was analysed in the
// last freshFor, it is the reference and the last keyframe alone is
// compared with it; otherwise the frames since the last keyframe are
// decoded (catchUp). It reports whether motion is confirmed.
func (d *Detector) look(t time.Time) bool {
	if d.bg.have && !d.analysed.IsZero() && t.Sub(d.analysed) < freshFor && len(d.gop) > 0 && d.gop[0].key {
		return d.analyseKey(&d.gop[0], t)
	}
	return d.catchUp(t)
}

// catchUp has the frames since the last keyframe decoded, read back from
// the spool file: the keyframe's picture starts the background, the
// newest picture is compared with it. It reports whether motion is
// confirmed. When a frame cannot be read back (its segment has ended),
// the look gives up on this GOP (counted in unreadable); the next keyframe
// is checked as usual.
func (d *Detector) catchUp(t time.Time) bool {
	d.bg.reset()
	if len(d.gop) == 0 {
		return false
	}
	units := make([][][]byte, len(d.gop))
	for i := range d.gop {
		nalus, err := d.gop[i].load()
		if err != nil {
			d.unreadable++
			return false
		}
		units[i] = nalus
	}
	res := d.decode(&decodeproc.Request{Units: units, GrayFirst: true, GrayLast: len(units) > 1})
	if res == nil {
		return false
	}
	if res.GrayFirst != nil {
		d.analyse(t, res.GrayFirst)
	}
	if len(units) == 1 {
		return false
	}
	return d.analyse(t, res.GrayLast)
}

// analyseKey has keyframe f decoded alone and compares it. A keyframe that
// cannot be read back (its segment has ended) is counted in unreadable
// and confirms nothing.
func (d *Detector) analyseKey(f *frame, t time.Time) bool {
	nalus, err := f.load()
	if err != nil {
		d.unreadable++
		return false
	}
	res := d.decode(&decodeproc.Request{Still: true, Units: [][][]byte{nalus}, GrayLast: true})
	if res == nil {
		return false
	}
	return d.analyse(t, res.GrayLast)
}

// decode completes req (codec, fast decoding, luma at analysisWidth, the
// event image while one is missing) and sends it to a decoder process;
// nil when it failed (counted in errors).
func (d *Detector) decode(req *decodeproc.Request) *decodeproc.Result {
	req.Codec, req.Fast, req.GrayWidth = d.codec, true, analysisWidth
	if d.ev == nil || d.ev.Image == nil {
		req.Image, req.ImageWidth, req.Quality = decodeproc.JPEG, imageWidth, imageQuality
	}
	d.image = nil
	res, err := d.dec.Decode(context.Background(), req)
	if err != nil {
		d.errors++
		return nil
	}
	d.decoded += uint64(res.Pictures)
	d.cpu += res.CPU
	d.image = res.JPEG
	return res
}

// analyse compares luma picture g with the background and the picture
// analysed before; it reports confirmed motion.
func (d *Detector) analyse(t time.Time, g *image.Gray) bool {
	if g == nil {
		d.errors++
		return false
	}
	d.analysed = t
	area := d.bg.compare(g, d.set)
	if area < d.set.minChangedArea() {
		return false
	}
	if d.ev != nil {
		d.ev.Area = max(d.ev.Area, area)
		if d.ev.Image == nil {
			d.ev.Image = d.takeImage()
		}
	}
	return true
}

// takeImage returns the JPEG of the last picture analysed, if it was
// asked for, and lets go of it.
func (d *Detector) takeImage() []byte {
	img := d.image
	d.image = nil
	return img
}

// finish closes the open event; it is returned when it lasted at least
// MinDuration.
func (d *Detector) finish() []Event {
	ev := d.ev
	d.ev = nil
	if ev == nil || ev.End.Sub(ev.Start) < d.set.MinDuration {
		return nil
	}
	return []Event{*ev}
}

// stop goes back to idle. The background is kept (160 px wide, small) for
// a trigger soon after.
func (d *Detector) stop() {
	d.state = idle
	d.image = nil
}
