package rtsp

import (
	"fmt"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// newReader picks the first H.264 or H.265 track and, when sound is on, the
// first AAC track of the session.
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
		var aac *format.MPEG4Audio
		if m := desc.FindFormat(&aac); m != nil && aac.Config != nil {
			r.medias = append(r.medias, m)
			r.formats = append(r.formats, aac)
			r.tracks = append(r.tracks, &media.Track{Codec: media.AAC, ClockRate: aac.ClockRate(), AAC: aac.Config})
		}
	}
	return r, nil
}
