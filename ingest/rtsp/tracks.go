package rtsp

import (
	"fmt"
	"strings"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// newReader picks the first H.264 or H.265 track and, when sound is on, an
// audio track (audioFormat).
func newReader(desc *description.Session, sound bool) (*reader, error) {
	r := &reader{}
	var h264f *format.H264
	var h265f *format.H265
	if m := desc.FindFormat(&h264f); m != nil {
		sps, pps := h264f.SafeParams()
		r.medias = append(r.medias, m)
		r.formats = append(r.formats, h264f)
		r.tracks = append(r.tracks, &media.Track{Codec: media.H264, ClockRate: 90000, SPS: sps, PPS: pps})
	} else if m := desc.FindFormat(&h265f); m != nil {
		vps, sps, pps := h265f.SafeParams()
		r.medias = append(r.medias, m)
		r.formats = append(r.formats, h265f)
		r.tracks = append(r.tracks, &media.Track{Codec: media.H265, ClockRate: 90000, VPS: vps, SPS: sps, PPS: pps})
	} else {
		var names []string
		for _, m := range desc.Medias {
			for _, f := range m.Formats {
				names = append(names, f.Codec())
			}
		}
		return nil, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("no H.264 or H.265 track (offered: %v)", names))
	}
	if sound {
		m, f, t := audioFormat(desc)
		switch {
		case f != nil:
			r.medias = append(r.medias, m)
			r.formats = append(r.formats, f)
			r.tracks = append(r.tracks, t)
		case t != nil:
			// Listed, not set up: the pipeline says why there is no sound.
			r.tracks = append(r.tracks, t)
		}
	}
	return r, nil
}

// audioFormat picks the audio track to record: the first AAC one, else the
// first G.711 or Opus (mono or stereo) one, transcoded to AAC later. When
// the camera offers audio of other codecs only, it returns no format and a
// track named after the first of them, which is not set up.
func audioFormat(desc *description.Session) (*description.Media, format.Format, *media.Track) {
	var aac *format.MPEG4Audio
	if m := desc.FindFormat(&aac); m != nil && aac.Config != nil {
		return m, aac, &media.Track{Codec: media.AAC, ClockRate: aac.ClockRate(), AAC: aac.Config}
	}
	var other *media.Track
	for _, m := range desc.Medias {
		if m.Type != description.MediaTypeAudio {
			continue
		}
		for _, f := range m.Formats {
			switch f := f.(type) {
			case *format.G711:
				codec := media.G711A
				if f.MULaw {
					codec = media.G711U
				}
				return m, f, &media.Track{Codec: codec, ClockRate: f.SampleRate, Channels: f.ChannelCount}
			case *format.Opus:
				if f.ChannelCount <= 2 {
					return m, f, &media.Track{Codec: media.Opus, ClockRate: 48000, Channels: f.ChannelCount}
				}
				if other == nil {
					other = &media.Track{Codec: "multiopus", ClockRate: 48000}
				}
			}
			if other == nil {
				other = &media.Track{Codec: media.Codec(codecName(f)), ClockRate: f.ClockRate()}
			}
		}
	}
	return nil, nil, other
}

// codecName is how a format names its codec: gortsplib's name, or the
// encoding name of the rtpmap for a format it does not know.
func codecName(f format.Format) string {
	if _, ok := f.(*format.Generic); ok {
		if name, _, _ := strings.Cut(f.RTPMap(), "/"); name != "" {
			return name
		}
	}
	return f.Codec()
}
