package live

import (
	"time"

	"github.com/bluenviron/gohlslib/v2"
	"github.com/bluenviron/gohlslib/v2/pkg/codecs"

	"github.com/vigia/vigia/media"
)

// feeder converts one run's units into muxer writes: the first H.264 or
// H.265 track and the first AAC track are served, the others ignored.
type feeder struct {
	tracks []*media.Track
	video  int               // index of the video track, -1 for none
	audio  int               // index of the audio track, -1 for none
	htrack []*gohlslib.Track // the current muxer's tracks by source track index; nil for tracks not served
}

func newFeeder(tracks []*media.Track) *feeder {
	f := &feeder{tracks: tracks, video: -1, audio: -1}
	for i, t := range tracks {
		switch {
		case (t.Codec == media.H264 || t.Codec == media.H265) && f.video < 0:
			f.video = i
		case t.Codec == media.AAC && t.AAC != nil && f.audio < 0:
			f.audio = i
		}
	}
	return f
}

// muxerTracks returns new tracks for a muxer and uses them for the next
// writes. Each muxer gets its own: a muxer updates its tracks' parameter
// sets from the units it is given.
func (f *feeder) muxerTracks() []*gohlslib.Track {
	f.htrack = make([]*gohlslib.Track, len(f.tracks))
	var list []*gohlslib.Track
	for _, i := range []int{f.video, f.audio} {
		if i < 0 {
			continue
		}
		t := f.tracks[i]
		var ht *gohlslib.Track
		switch t.Codec {
		case media.H264:
			ht = &gohlslib.Track{Codec: &codecs.H264{SPS: t.SPS, PPS: t.PPS}, ClockRate: 90000}
		case media.H265:
			ht = &gohlslib.Track{Codec: &codecs.H265{VPS: t.VPS, SPS: t.SPS, PPS: t.PPS}, ClockRate: 90000}
		case media.AAC:
			ht = &gohlslib.Track{Codec: &codecs.MPEG4Audio{Config: *t.AAC}, ClockRate: t.AAC.SampleRate}
		}
		f.htrack[i] = ht
		list = append(list, ht)
	}
	return list
}

func ticks(d time.Duration, rate int) int64 {
	sec := int64(d / time.Second)
	rem := int64(d % time.Second)
	return sec*int64(rate) + rem*int64(rate)/int64(time.Second)
}

// write gives u to m.
func (f *feeder) write(m *gohlslib.Muxer, u *media.Unit) error {
	if u.Track < 0 || u.Track >= len(f.htrack) || f.htrack[u.Track] == nil {
		return nil
	}
	ht := f.htrack[u.Track]
	switch {
	case u.Track == f.video && f.tracks[u.Track].Codec == media.H265:
		return m.WriteH265(ht, u.Time, ticks(u.PTS, 90000), u.NALUs)
	case u.Track == f.video:
		return m.WriteH264(ht, u.Time, ticks(u.PTS, 90000), u.NALUs)
	case u.Track == f.audio:
		return m.WriteMPEG4Audio(ht, u.Time, ticks(u.PTS, ht.ClockRate), [][]byte{u.Payload})
	}
	return nil
}
