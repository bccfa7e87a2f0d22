//go:build cgo

package motion

import (
	"bytes"
	"image/jpeg"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// labelled is the labelled test set (docs/events.md gives the results).
var labelled = []scene{
	{
		name: "object", length: 60 * time.Second, size: "640x360", codec: "h264", noise: 5,
		motion: []interval{{sec(8), sec(14)}, {sec(24), sec(28)}, {sec(38), sec(41)}, {sec(50), sec(56)}},
	},
	{
		name: "lighting", length: 60 * time.Second, size: "640x360", codec: "h264", noise: 5,
		motion: []interval{{sec(10), sec(15)}, {sec(40), sec(46)}},
		// lights on at 22 s (a step), dimming from 30 s to 33 s, back at 52 s.
		lighting: "if(lt(t,22),0,if(lt(t,30),0.15,if(lt(t,33),0.15-(t-30)*0.08,if(lt(t,52),-0.09,0))))",
	},
	{
		name: "object-h265", length: 40 * time.Second, size: "640x360", codec: "h265", noise: 5,
		motion: []interval{{sec(8), sec(13)}, {sec(22), sec(30)}},
	},
}

// TestNoiseOnlyTenMinutes feeds ten minutes of a still, noisy camera (much
// faster than real time) and expects no event.
func TestNoiseOnlyTenMinutes(t *testing.T) {
	sc := scene{name: "noise", length: 10 * time.Minute, size: "480x270", codec: "h264", noise: 8}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := sc.encode(t, base)
	if got := units[len(units)-1].Time.Sub(base); got < 10*time.Minute-time.Second {
		t.Fatalf("clip lasts %s, want 10 min", got)
	}
	evs, d := runDetector(units, media.H264, DefaultSettings())
	t.Logf("noise only, %d units (%s of media): %d events, %d looks, %d frames decoded",
		len(units), units[len(units)-1].Time.Sub(base), len(evs), d.looks, d.decoded)
	if len(evs) != 0 {
		t.Fatalf("events on a noise-only camera: %v", intervals(evs, base))
	}
}

func runDetector(units []*media.Unit, codec media.Codec, s Settings) ([]Event, *Detector) {
	d := NewDetector("cam", s, testDecoder)
	var evs []Event
	evs = append(evs, d.SetCodec(codec)...)
	for _, u := range units {
		evs = append(evs, d.Unit(u)...)
	}
	evs = append(evs, d.Close()...)
	return evs, d
}

func TestLabelledSet(t *testing.T) {
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var tp, tr float64
	for _, sc := range labelled {
		t.Run(sc.name, func(t *testing.T) {
			units := sc.encode(t, base)
			codec := media.H264
			if sc.codec == "h265" {
				codec = media.H265
			}
			evs, d := runDetector(units, codec, DefaultSettings())
			found := intervals(evs, base)
			p, r := score(sc.motion, found)
			tp += p
			tr += r
			t.Logf("%s: truth %v, found %v: precision %.2f recall %.2f (%d looks, %d frames decoded of %d)",
				sc.name, sc.motion, found, p, r, d.looks, d.decoded, len(units))
			if p < 0.9 || r < 0.9 {
				t.Errorf("precision %.2f recall %.2f, want both ≥ 0.9", p, r)
			}
			for _, tr := range sc.motion {
				for _, f := range found {
					if overlaps(tr, f) && ((f.from-tr.from).Abs() > sec(2.5) || (f.to-tr.to).Abs() > sec(2.5)) {
						t.Errorf("found %v for true %v: boundary off by more than 2.5 s", f, tr)
					}
				}
			}
			for _, e := range evs {
				if e.Camera != "cam" || e.ID != EventID("cam", e.Start) || !e.End.After(e.Start) {
					t.Errorf("bad event %+v", e)
				}
				img, err := jpeg.Decode(bytes.NewReader(e.Image))
				if err != nil || img.Bounds().Dx() != 320 {
					t.Errorf("event image: %v", err)
				}
			}
		})
	}
}
