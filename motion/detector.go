package motion

import (
	"bytes"
	"image"
	"image/jpeg"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decoder"
)

const (
	analysisWidth = 160              // width of the luma pictures compared
	lookFor       = 4 * time.Second  // keyframes checked after a trigger before giving up
	firstCheck    = 2 * time.Second  // keyframe checks of an event: first interval
	maxCheck      = 8 * time.Second  // ... doubling up to this while motion goes on
	maxGOP        = 300              // units kept since the last keyframe for catching up
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
type Detector struct {
	camera string
	set    Settings
	codec  media.Codec

	trig trigger
	bg   background
	gray *image.Gray
	dec  *decoder.Decoder

	gop      []*media.Unit // units since the last keyframe, keyframe first
	gopBroke bool          // the GOP outgrew maxGOP or units were lost

	state     state
	lookStart time.Time // first trigger of the look
	nextCheck time.Time // next keyframe to analyse during an event
	every     time.Duration
	doubt     bool // the last keyframe checked did not confirm
	lastTime  time.Time
	analysed  time.Time // media time of the last picture analysed

	ev *Event // open event

	// Counters, for metrics.
	looks   uint64
	decoded uint64
	errors  uint64
}

// NewDetector returns a Detector for camera with settings s (zero fields
// take their defaults).
func NewDetector(camera string, s Settings) *Detector {
	return &Detector{camera: camera, set: s.withDefaults()}
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
	d.gop = d.gop[:0]
	d.gopBroke = false
	return out
}

// Gap says that units were lost: the frames before the next keyframe
// cannot be decoded.
func (d *Detector) Gap() {
	d.gop = d.gop[:0]
	d.gopBroke = true
}

// Close finishes an open event and frees the decoder.
func (d *Detector) Close() []Event {
	out := d.finish()
	d.stop()
	return out
}

// Unit takes the next video unit (in decoding order) and returns the
// events that ended with it.
func (d *Detector) Unit(u *media.Unit) []Event {
	if d.codec == "" || len(u.NALUs) == 0 {
		return nil
	}
	t := u.Time
	if t.IsZero() {
		t = d.lastTime
	}
	d.lastTime = t

	if u.Key {
		d.gop = append(d.gop[:0], u)
		d.gopBroke = false
	} else if !d.gopBroke && len(d.gop) > 0 {
		if len(d.gop) < maxGOP {
			d.gop = append(d.gop, u)
		} else {
			d.gop, d.gopBroke = d.gop[:0], true
		}
	}

	fired := false
	if u.Key {
		d.trig.keyframe()
	} else {
		fired = d.trig.add(u.Size(), d.state == idle, d.set)
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
		if u.Key && d.analyseKey(u, t) {
			d.open(t)
		} else if u.Key && t.Sub(d.lookStart) >= lookFor {
			// Triggered but nothing moves: the sizes changed for another
			// reason (encoder, lighting); take them as the new baseline.
			d.stop()
			d.trig.rebase()
		}
	case active:
		if fired && !d.doubt {
			d.ev.End = t
		}
		if u.Key && !t.Before(d.nextCheck) {
			if d.analyseKey(u, t) {
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
			end := d.ev.End
			out = append(out, d.finish()...)
			d.ev = &Event{ID: EventID(d.camera, end), Camera: d.camera, Start: end, End: end, Image: d.image()}
		}
	}
	return out
}

// open starts an event confirmed at t; it began at the trigger.
func (d *Detector) open(t time.Time) {
	d.state = active
	d.ev = &Event{ID: EventID(d.camera, d.lookStart), Camera: d.camera, Start: d.lookStart, End: t, Area: d.bg.lastArea, Image: d.image()}
	d.every, d.doubt = firstCheck, false
	d.nextCheck = t.Add(firstCheck - firstCheck/8)
}

// decoder returns the detector's decoder, opening it when needed.
func (d *Detector) decoder() *decoder.Decoder {
	if d.dec == nil {
		dec, err := decoder.New(d.codec, decoder.Options{Fast: true})
		if err != nil {
			d.errors++
			return nil
		}
		d.dec = dec
	}
	return d.dec
}

// look starts a look at a trigger at t. When a picture was analysed in the
// last freshFor, it is the reference and the last keyframe alone is
// compared with it; otherwise the frames since the last keyframe are
// decoded (catchUp). It reports whether motion is confirmed.
func (d *Detector) look(t time.Time) bool {
	if d.bg.have && !d.analysed.IsZero() && t.Sub(d.analysed) < freshFor && len(d.gop) > 0 && d.gop[0].Key {
		return d.analyseKey(d.gop[0], t)
	}
	return d.catchUp(t)
}

// catchUp decodes the units since the last keyframe: the keyframe's
// picture starts the background, the newest picture is compared with it.
// It reports whether motion is confirmed.
func (d *Detector) catchUp(t time.Time) bool {
	d.bg.reset()
	dec := d.decoder()
	if dec == nil || len(d.gop) == 0 {
		return false
	}
	dec.Reset()
	for i, u := range d.gop {
		ok, err := dec.Decode(u.NALUs)
		if err != nil {
			d.errors++
			dec.Reset()
			return false
		}
		if !ok {
			continue
		}
		d.decoded++
		if i == 0 {
			d.analyse(t)
		}
	}
	if len(d.gop) == 1 {
		return false
	}
	return d.analyse(t)
}

// analyseKey decodes keyframe u alone and compares it.
func (d *Detector) analyseKey(u *media.Unit, t time.Time) bool {
	dec := d.decoder()
	if dec == nil {
		return false
	}
	ok, err := dec.DecodeStill(u.NALUs)
	if err != nil || !ok {
		d.errors++
		return false
	}
	d.decoded++
	return d.analyse(t)
}

// analyse compares the decoder's picture with the background and the
// picture analysed before; it reports confirmed motion.
func (d *Detector) analyse(t time.Time) bool {
	g, err := d.dec.Gray(analysisWidth, d.gray)
	if err != nil {
		d.errors++
		return false
	}
	d.gray = g
	d.analysed = t
	area := d.bg.compare(g, d.set)
	if area < d.set.minChangedArea() {
		return false
	}
	if d.ev != nil {
		d.ev.Area = max(d.ev.Area, area)
		if d.ev.Image == nil {
			d.ev.Image = d.image()
		}
	}
	return true
}

// image encodes the decoder's picture for an event.
func (d *Detector) image() []byte {
	if d.dec == nil {
		return nil
	}
	img, err := d.dec.YCbCr(imageWidth)
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: imageQuality}); err != nil {
		return nil
	}
	return buf.Bytes()
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

// stop goes back to idle and closes the decoder: a still camera holds no
// decoded pictures (a 720p decoder keeps several megabytes), and opening
// one again costs far less than the decoding that follows. The background
// is kept (160 px wide, small) for a trigger soon after.
func (d *Detector) stop() {
	d.state = idle
	if d.dec != nil {
		d.dec.Close()
		d.dec = nil
	}
}
