package synth

import (
	"context"
	"fmt"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/vigia/vigia/ingest/rtmp/wire"
)

// RTMPStreamSpec describes a synthetic RTMP stream: a fixture clip looped
// in real time as FLV over RTMP.
type RTMPStreamSpec struct {
	// Name of the stream on an RTMPServer ("cam1" in
	// rtmp://host/live/cam1). Unused by PublishRTMP.
	Name string

	// Codec is CodecH264 (default) or CodecH265.
	Codec string

	// Audio adds the AAC fixture (16 kHz mono).
	Audio bool

	// Small uses the 640x360 clip instead of 1280x720.
	Small bool

	// Enhanced sends video with Enhanced RTMP headers (FourCC hvc1 or
	// avc1); otherwise the legacy FLV codec ids 7 (H.264) and 12 (H.265).
	Enhanced bool
}

func (s RTMPStreamSpec) codec() string {
	if s.Codec == "" {
		return CodecH264
	}
	return s.Codec
}

// stripParams returns a keyframe's NAL units without parameter sets: FLV
// carries them in the sequence header, as FFmpeg does when it copies from
// MP4.
func stripParams(codec string, nalus [][]byte) [][]byte {
	out := make([][]byte, 0, len(nalus))
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		if codec == CodecH264 {
			switch h264.NALUType(n[0] & 0x1f) {
			case h264.NALUTypeSPS, h264.NALUTypePPS:
				continue
			}
		} else if len(n) >= 2 {
			switch h265.NALUType((n[0] >> 1) & 0x3f) {
			case h265.NALUType_VPS_NUT, h265.NALUType_SPS_NUT, h265.NALUType_PPS_NUT:
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// feedRTMP sends spec's stream on c as message stream streamID, paced in
// real time, until ctx ends or a write fails.
func feedRTMP(ctx context.Context, c *wire.Conn, streamID uint32, spec RTMPStreamSpec) error {
	clip, err := Fixture(spec.codec(), spec.Small)
	if err != nil {
		return err
	}
	var audio *AudioClip
	if spec.Audio {
		if audio, err = AudioFixture(); err != nil {
			return err
		}
	}
	vcodec := wire.VideoH264
	cfg := wire.MarshalAVCConfig(clip.SPS, clip.PPS)
	if clip.Codec == CodecH265 {
		vcodec = wire.VideoH265
		cfg = wire.MarshalHEVCConfig(clip.VPS, clip.SPS, clip.PPS)
	}
	write := func(typ uint8, ts uint32, payload []byte) error {
		cs := uint32(wire.CSVideo)
		if typ == wire.TypeAudio {
			cs = wire.CSAudio
		}
		return c.WriteMessage(cs, &wire.Message{Type: typ, StreamID: streamID, Timestamp: ts, Payload: payload})
	}
	if err := write(wire.TypeVideo, 0, wire.VideoTag{Codec: vcodec, Enhanced: spec.Enhanced, Key: true, Kind: wire.KindConfig, Data: cfg}.Marshal()); err != nil {
		return err
	}
	if audio != nil {
		asc, err := audio.Config.Marshal()
		if err != nil {
			return fmt.Errorf("aac config: %w", err)
		}
		if err := write(wire.TypeAudio, 0, wire.AudioTag{Format: wire.SoundAAC, Kind: wire.KindConfig, Data: asc}.Marshal()); err != nil {
			return err
		}
	}
	start := time.Now()
	frameDur := time.Duration(float64(time.Second) / clip.FPS)
	var v, a int64
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		vt := time.Duration(v) * frameDur
		at := time.Duration(1<<62 - 1)
		if audio != nil {
			at = samplesDuration(a*1024, audio.SampleRate())
		}
		due := min(vt, at)
		if wait := time.Until(start.Add(due)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		ts := uint32(due / time.Millisecond)
		if vt <= at {
			u := clip.Units[v%int64(len(clip.Units))]
			tag := wire.VideoTag{Codec: vcodec, Enhanced: spec.Enhanced, Key: u.Key, Kind: wire.KindFrames,
				Data: wire.JoinNALUs(stripParams(clip.Codec, u.NALUs))}
			if err := write(wire.TypeVideo, ts, tag.Marshal()); err != nil {
				return err
			}
			v++
			continue
		}
		u := audio.Units[a%int64(len(audio.Units))]
		if err := write(wire.TypeAudio, ts, wire.AudioTag{Format: wire.SoundAAC, Kind: wire.KindFrames, Data: u.Payload}.Marshal()); err != nil {
			return err
		}
		a++
	}
}
