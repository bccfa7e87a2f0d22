package synth

import (
	"fmt"
	"math"
	"time"

	"github.com/vigia/vigia/media"
)

// defaultFPS is the frame rate of the fixture clips, used when the SPS does
// not carry timing information.
const defaultFPS = 15

// Clip is a parsed video fixture: access units ready to be sent, with the
// parameter sets and the picture size. A Clip returned by Fixture is shared:
// callers must not modify it.
type Clip struct {
	// Codec is CodecH264 or CodecH265.
	Codec string

	// Width and Height of the picture, from the SPS.
	Width, Height int

	// FPS is the frame rate of the clip (from the SPS timing information,
	// 15 when absent).
	FPS float64

	// VPS (H.265 only), SPS and PPS of the clip.
	VPS, SPS, PPS []byte

	// Units are the access units of the clip in decoding order (no B-frames,
	// so also presentation order), with PTS = DTS = index / FPS and Track 0.
	// The first unit is a keyframe, and every keyframe carries the parameter
	// sets in-band.
	Units []media.Unit

	packets [][]rtpPayload
}

// Track returns the media track describing the clip.
func (c *Clip) Track() media.Track {
	return media.Track{
		Codec:     codecMedia(c.Codec),
		ClockRate: videoClockRate,
		VPS:       c.VPS,
		SPS:       c.SPS,
		PPS:       c.PPS,
	}
}

// Duration returns the length of one loop of the clip.
func (c *Clip) Duration() time.Duration {
	return time.Duration(float64(len(c.Units)) * float64(time.Second) / c.FPS)
}

// GOP returns the number of frames from one keyframe to the next (the
// distance between the first two keyframes, or the clip length when it has
// only one).
func (c *Clip) GOP() int {
	for i := 1; i < len(c.Units); i++ {
		if c.Units[i].Key {
			return i
		}
	}
	return len(c.Units)
}

func codecMedia(name string) media.Codec {
	if name == CodecH265 {
		return media.H265
	}
	return media.H264
}

// parseClip parses an Annex-B elementary stream with an access unit
// delimiter before every access unit.
func parseClip(codec string, data []byte) (*Clip, error) {
	vc, err := codecByName(codec)
	if err != nil {
		return nil, err
	}
	aus := splitAccessUnits(splitNALUs(data), vc)
	if len(aus) == 0 {
		return nil, fmt.Errorf("no access units: %w", ErrBadClip)
	}

	c := &Clip{Codec: codec}
	for _, au := range aus {
		for _, n := range au {
			switch vc.naluType(n) {
			case vc.vps:
				if c.VPS == nil {
					c.VPS = n
				}
			case vc.sps:
				if c.SPS == nil {
					c.SPS = n
				}
			case vc.pps:
				if c.PPS == nil {
					c.PPS = n
				}
			}
		}
	}
	if c.SPS == nil || c.PPS == nil || (vc.vps >= 0 && c.VPS == nil) {
		return nil, fmt.Errorf("missing parameter sets: %w", ErrBadClip)
	}
	c.Width, c.Height, c.FPS, err = vc.size(c.SPS)
	if err != nil {
		return nil, fmt.Errorf("parse sps: %w: %w", ErrBadClip, err)
	}
	if c.FPS <= 0 || c.FPS > 240 || math.IsNaN(c.FPS) {
		c.FPS = defaultFPS
	}

	params := [][]byte{c.SPS, c.PPS}
	if c.VPS != nil {
		params = [][]byte{c.VPS, c.SPS, c.PPS}
	}

	c.Units = make([]media.Unit, len(aus))
	for i, au := range aus {
		key := false
		hasSPS := false
		for _, n := range au {
			t := vc.naluType(n)
			key = key || vc.isKey(t)
			hasSPS = hasSPS || t == vc.sps
		}
		if key && !hasSPS {
			au = append(append([][]byte{}, params...), au...)
		}
		pts := time.Duration(math.Round(float64(i) * float64(time.Second) / c.FPS))
		c.Units[i] = media.Unit{PTS: pts, DTS: pts, Key: key, NALUs: au}
	}
	if !c.Units[0].Key {
		return nil, fmt.Errorf("first access unit is not a keyframe: %w", ErrBadClip)
	}

	c.packets, err = packetizeVideo(vc, c.Units)
	if err != nil {
		return nil, err
	}
	return c, nil
}
