package rtmp

import (
	"errors"
	"fmt"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp/wire"
	"github.com/vigia/vigia/media"
)

// demuxer turns the audio and video messages of one RTMP stream into
// tracks and access units for a sink. Tracks are announced at the first
// video keyframe after the video configuration; the audio track is in them
// when sound is on and the AAC configuration, or a G.711 frame, came
// before. A configuration that changes the tracks (codec change, audio
// arriving late) announces them again at the next keyframe, which starts a
// new run. Audio of another FLV sound format is listed by name, without
// units, so that the pipeline says why there is no sound.
type demuxer struct {
	sink  ingest.Sink
	sound bool

	// onDecodeError counts frames that are dropped but do not end the
	// connection. Optional.
	onDecodeError func(error)

	codec   media.Codec
	lenSize int
	h264p   ingest.H264Params
	h265p   ingest.H265Params
	aac     *mpeg4audio.AudioSpecificConfig
	g711    *media.Track // the G.711 audio seen, when no AAC
	other   media.Codec  // the first sound format not recorded, named

	tracks     []*media.Track
	videoIdx   int
	audioIdx   int
	reannounce bool

	base      int64 // ms, timestamp of the run's first unit
	start     time.Time
	lastVideo int64
	lastAudio int64
	now       func() time.Time

	vts, ats unwrapper

	warnedAudio bool
	held        *heldFrame // the first keyframe, waiting for audio
}

// unwrapper extends 32-bit millisecond timestamps: each step is taken as
// the signed 32-bit difference from the previous one.
type unwrapper struct {
	last uint32
	full int64
	set  bool
}

func (u *unwrapper) unwrap(ts uint32) int64 {
	if !u.set {
		u.last, u.full, u.set = ts, int64(ts), true
		return u.full
	}
	u.full += int64(int32(ts - u.last))
	u.last = ts
	return u.full
}

func newDemuxer(sink ingest.Sink, sound bool) *demuxer {
	return &demuxer{sink: sink, sound: sound, audioIdx: -1, now: time.Now}
}

// message handles one audio, video or aggregate message. An error ends
// the connection.
func (d *demuxer) message(m *wire.Message) error {
	switch m.Type {
	case wire.TypeVideo:
		return d.video(m)
	case wire.TypeAudio:
		return d.audio(m)
	case wire.TypeAggregate:
		subs, err := wire.SplitAggregate(m)
		for _, s := range subs {
			if s.Type == wire.TypeVideo || s.Type == wire.TypeAudio {
				if err := d.message(s); err != nil {
					return err
				}
			}
		}
		return err
	}
	return nil
}

func (d *demuxer) decodeError(err error) {
	if d.onDecodeError != nil {
		d.onDecodeError(err)
	}
}

func (d *demuxer) video(m *wire.Message) error {
	if len(m.Payload) == 0 {
		return nil
	}
	tag, err := wire.ParseVideoTag(m.Payload)
	if err != nil {
		if errors.Is(err, wire.ErrUnsupported) {
			return ingest.Permanent(ingest.ReasonUnsupported, err)
		}
		return err
	}
	codec := media.H264
	if tag.Codec == wire.VideoH265 {
		codec = media.H265
	}
	switch tag.Kind {
	case wire.KindConfig:
		return d.videoConfig(codec, tag.Data)
	case wire.KindFrames:
	default:
		return nil
	}
	if codec != d.codec || d.lenSize == 0 {
		d.decodeError(fmt.Errorf("%s frame before its configuration", codec))
		return nil
	}
	nalus, err := wire.SplitNALUs(tag.Data, d.lenSize)
	if err != nil {
		return err
	}
	if len(nalus) == 0 {
		return nil
	}
	var key bool
	if codec == media.H264 {
		nalus = d.h264p.Apply(nalus)
		key = h264.IsRandomAccess(nalus)
	} else {
		nalus = d.h265p.Apply(nalus)
		key = h265.IsRandomAccess(nalus)
	}
	dts := d.vts.unwrap(m.Timestamp)
	if d.tracks != nil && dts < d.lastVideo {
		// timestamps went back: a new run from the next keyframe
		d.reannounce = true
	}
	if err := d.releaseHeld(); err != nil {
		return err
	}
	pts := dts + int64(tag.CTS)
	if pts < dts {
		pts = dts
	}
	if d.tracks == nil || d.reannounce {
		if !key {
			return nil
		}
		if d.tracks == nil && d.sound && d.aac == nil && d.g711 == nil {
			// G.711 has no configuration to come first: its first tag
			// follows the first frame. The first keyframe waits for the
			// next message, so that such audio is in the first run.
			d.held = &heldFrame{dts: dts, pts: pts, nalus: copyAU(nalus)}
			return nil
		}
		if err := d.announce(dts); err != nil {
			return err
		}
	}
	d.deliverVideo(dts, pts, key, copyAU(nalus))
	return nil
}

// heldFrame is the first keyframe of a stream, waiting for the next
// message.
type heldFrame struct {
	dts, pts int64
	nalus    [][]byte
}

// releaseHeld announces the tracks and delivers the held keyframe, if any.
func (d *demuxer) releaseHeld() error {
	h := d.held
	if h == nil {
		return nil
	}
	d.held = nil
	if err := d.announce(h.dts); err != nil {
		return err
	}
	d.deliverVideo(h.dts, h.pts, true, h.nalus)
	return nil
}

// deliverVideo hands a frame of the current run to the sink.
func (d *demuxer) deliverVideo(dts, pts int64, key bool, nalus [][]byte) {
	d.lastVideo = dts
	p := time.Duration(pts-d.base) * time.Millisecond
	d.sink.Unit(&media.Unit{
		Track: d.videoIdx, PTS: p, DTS: time.Duration(dts-d.base) * time.Millisecond,
		Time: d.start.Add(p), Key: key, NALUs: nalus,
	})
}

func (d *demuxer) videoConfig(codec media.Codec, data []byte) error {
	var cfg wire.DecoderConfig
	var err error
	if codec == media.H264 {
		cfg, err = wire.ParseAVCConfig(data)
	} else {
		cfg, err = wire.ParseHEVCConfig(data)
	}
	if err != nil {
		return err
	}
	if d.codec != "" && d.codec != codec {
		d.reannounce = true
	}
	d.codec, d.lenSize = codec, cfg.LengthSize
	if codec == media.H264 {
		d.h264p = ingest.H264Params{SPS: cfg.SPS[0], PPS: cfg.PPS[0]}
	} else {
		d.h265p = ingest.H265Params{VPS: cfg.VPS[0], SPS: cfg.SPS[0], PPS: cfg.PPS[0]}
	}
	return nil
}

func (d *demuxer) audio(m *wire.Message) error {
	if !d.sound || len(m.Payload) == 0 {
		return nil
	}
	tag, err := wire.ParseAudioTag(m.Payload)
	if err != nil {
		return err
	}
	var codec media.Codec
	switch tag.Format {
	case wire.SoundAAC:
		codec = media.AAC
	case soundALaw, soundMuLaw:
		codec = d.g711Tag(tag.Format, m.Payload[0])
		tag.Kind = wire.KindFrames
	default:
		if !d.warnedAudio {
			d.warnedAudio = true
			d.other = soundFormatName(tag.Format)
			d.decodeError(fmt.Errorf("%w: flv sound format %d, only AAC and G.711 are recorded", wire.ErrUnsupported, tag.Format))
		}
		return d.releaseHeld()
	}
	switch tag.Kind {
	case wire.KindConfig:
		var asc mpeg4audio.AudioSpecificConfig
		if err := asc.Unmarshal(tag.Data); err != nil {
			d.decodeError(fmt.Errorf("aac config: %w", err))
			return d.releaseHeld()
		}
		if d.tracks != nil && (d.audioIdx < 0 || d.tracks[d.audioIdx].Codec != media.AAC) {
			d.reannounce = true
		}
		d.aac = &asc
		return d.releaseHeld()
	case wire.KindFrames:
	default:
		return d.releaseHeld()
	}
	if err := d.releaseHeld(); err != nil {
		return err
	}
	if d.tracks == nil || d.audioIdx < 0 || d.tracks[d.audioIdx].Codec != codec || d.reannounce || len(tag.Data) == 0 {
		return nil
	}
	ts := d.ats.unwrap(m.Timestamp)
	if ts < d.base || ts < d.lastAudio {
		return nil
	}
	d.lastAudio = ts
	p := time.Duration(ts-d.base) * time.Millisecond
	d.sink.Unit(&media.Unit{Track: d.audioIdx, PTS: p, DTS: p, Time: d.start.Add(p), Payload: append([]byte(nil), tag.Data...)})
	return nil
}

// FLV sound formats of G.711: 8 kHz (whatever the rate bits say), one
// byte per sample, mono or stereo by the type bit.
const (
	soundALaw  = 7
	soundMuLaw = 8
)

// g711Tag notes the G.711 audio of a tag whose header byte is hdr (a
// change of codec or channels announces the tracks again) and returns its
// codec.
func (d *demuxer) g711Tag(format uint8, hdr byte) media.Codec {
	codec := media.G711A
	if format == soundMuLaw {
		codec = media.G711U
	}
	channels := 1 + int(hdr&1)
	if d.aac == nil && (d.g711 == nil || d.g711.Codec != codec || d.g711.Channels != channels) {
		d.g711 = &media.Track{Codec: codec, ClockRate: 8000, Channels: channels}
		if d.tracks != nil {
			d.reannounce = true
		}
	}
	return codec
}

// soundFormatName names an FLV sound format Vigia does not record.
func soundFormatName(format uint8) media.Codec {
	switch format {
	case 0, 3:
		return "LPCM"
	case 1:
		return "ADPCM"
	case 2, 14:
		return "MP3"
	case 4, 5, 6:
		return "Nellymoser"
	case 11:
		return "Speex"
	}
	return media.Codec(fmt.Sprintf("FLV sound format %d", format))
}

// announce starts a run at a keyframe with timestamp dts.
func (d *demuxer) announce(dts int64) error {
	vt := &media.Track{Codec: d.codec, ClockRate: 90000}
	if d.codec == media.H264 {
		vt.SPS, vt.PPS = d.h264p.SPS, d.h264p.PPS
	} else {
		vt.VPS, vt.SPS, vt.PPS = d.h265p.VPS, d.h265p.SPS, d.h265p.PPS
	}
	tracks := []*media.Track{vt}
	d.videoIdx, d.audioIdx = 0, -1
	switch {
	case !d.sound:
	case d.aac != nil:
		d.audioIdx = 1
		tracks = append(tracks, &media.Track{Codec: media.AAC, ClockRate: d.aac.SampleRate, AAC: d.aac})
	case d.g711 != nil:
		d.audioIdx = 1
		g := *d.g711
		tracks = append(tracks, &g)
	case d.other != "":
		// Listed without units: the pipeline says why there is no sound.
		tracks = append(tracks, &media.Track{Codec: d.other})
	}
	if err := d.sink.Tracks(tracks); err != nil {
		return ingest.Permanent(ingest.ReasonUnsupported, err)
	}
	d.tracks = tracks
	d.reannounce = false
	d.base = dts
	d.start = d.now()
	d.lastVideo, d.lastAudio = dts, dts
	return nil
}

// copyAU copies an access unit into one buffer the sink can own.
func copyAU(au [][]byte) [][]byte {
	n := 0
	for _, nalu := range au {
		n += len(nalu)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(au))
	for i, nalu := range au {
		buf = append(buf, nalu...)
		out[i] = buf[len(buf)-len(nalu):]
	}
	return out
}
