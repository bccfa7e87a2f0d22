package rtsp

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// recordedRTP reads the RTP packets of a testdata file (hex, one per
// line).
func recordedRTP(t testing.TB, name string) []rtpPacket {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rtpPacket
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			b, err := hex.DecodeString(line)
			if err != nil {
				t.Fatal(err)
			}
			p, err := parseRTP(b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no packets", name)
	}
	return out
}

// audioReader returns a reader of an H.264 track and the audio format f,
// sound on, whose video has started (one frame through its handler).
func audioReader(t testing.TB, f format.Format, sink *unitSink) *reader {
	t.Helper()
	desc := &description.Session{Medias: []*description.Media{
		{Type: description.MediaTypeVideo, Formats: []format.Format{&format.H264{PayloadTyp: 96, PacketizationMode: 1}}},
		{Type: description.MediaTypeAudio, Formats: []format.Format{f}},
	}}
	r, err := newReader(desc, true)
	if err != nil {
		t.Fatal(err)
	}
	r.sink = sink
	if err := r.makeHandlers(); err != nil {
		t.Fatal(err)
	}
	for _, p := range encode(t, synth.CodecH264, clipUnits(t, synth.CodecH264)[:1], 1200)[0] {
		b, _ := p.Marshal()
		rp, err := parseRTP(b)
		if err != nil {
			t.Fatal(err)
		}
		r.handlers[0].packet(&rp, time.Now())
	}
	if len(sink.byTrack(0)) != 1 {
		t.Fatal("the video frame did not start the session's time axis")
	}
	return r
}

// TestFrameAudioRecorded: G.711 and Opus packets recorded from GStreamer
// and FFmpeg come out as one unit each, byte for byte, timed by their RTP
// timestamps; the G.711 ones hold the 440 Hz tone that was sent.
func TestFrameAudioRecorded(t *testing.T) {
	for _, tc := range []struct {
		file  string
		f     format.Format
		codec media.Codec
		rate  int
	}{
		{"rtp_pcmu_gstreamer.txt", &format.G711{PayloadTyp: 0, MULaw: true, SampleRate: 8000, ChannelCount: 1}, media.G711U, 8000},
		{"rtp_pcmu_ffmpeg.txt", &format.G711{PayloadTyp: 0, MULaw: true, SampleRate: 8000, ChannelCount: 1}, media.G711U, 8000},
		{"rtp_pcma_gstreamer.txt", &format.G711{PayloadTyp: 8, SampleRate: 8000, ChannelCount: 1}, media.G711A, 8000},
		{"rtp_opus_gstreamer.txt", &format.Opus{PayloadTyp: 96, ChannelCount: 2}, media.Opus, 48000},
		{"rtp_opus_ffmpeg.txt", &format.Opus{PayloadTyp: 97, ChannelCount: 1}, media.Opus, 48000},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".txt"), func(t *testing.T) {
			sink := &unitSink{}
			r := audioReader(t, tc.f, sink)
			if tr := r.tracks[1]; tr.Codec != tc.codec || tr.ClockRate != tc.rate {
				t.Fatalf("audio track %+v, want %s at %d Hz", tr, tc.codec, tc.rate)
			}
			errs := 0
			r.onDecodeError = func(err error) { errs++; t.Log(err) }
			var samples []int16
			pkts := recordedRTP(t, tc.file)
			for i := range pkts {
				r.handlers[1].packet(&pkts[i], time.Now())
			}
			got := sink.byTrack(1)
			if errs != 0 {
				t.Fatalf("%d decode errors", errs)
			}
			if tc.codec != media.Opus {
				samples = checkG711Units(t, got, pkts, tc.rate, tc.codec == media.G711U)
			} else {
				if len(got) != len(pkts) {
					t.Fatalf("%d units from %d packets", len(got), len(pkts))
				}
				for i, u := range got {
					if string(u.Payload) != string(pkts[i].payload) {
						t.Fatalf("unit %d differs from its packet's payload", i)
					}
					want := ticksToDuration(int64(pkts[i].ts-pkts[0].ts), tc.rate)
					if d := u.PTS - got[0].PTS - want; d < -time.Millisecond || d > time.Millisecond || u.DTS != u.PTS {
						t.Fatalf("unit %d at %v, %v after the first; want %v", i, u.PTS, u.PTS-got[0].PTS, want)
					}
					// GStreamer stamps its first packet the encoder's
					// look-ahead (312 samples) late.
					if n, err := audio.OpusSamples(u.Payload); err != nil || (i > 1 && n != int(pkts[i].ts-pkts[i-1].ts)) {
						t.Fatalf("opus unit %d: %d samples, %v; the timestamps say %d", i, n, err, pkts[i].ts-pkts[i-1].ts)
					}
				}
			}
			if samples != nil {
				crossings := 0
				for i := 1; i < len(samples); i++ {
					if (samples[i-1] < 0) != (samples[i] < 0) {
						crossings++
					}
				}
				if f := float64(crossings) / 2 / (float64(len(samples)) / 8000); f < 430 || f > 450 {
					t.Fatalf("decoded tone at %.0f Hz, sent 440 Hz", f)
				}
			}
		})
	}
}

// checkG711Units checks the units of G.711 packets: their samples are
// those of the packets, in order, but for the last packets still gathered;
// each starts with a packet, timed by its timestamp; each holds at least
// g711UnitDuration but where the next packet does not follow on the RTP
// clock. It returns the samples decoded.
func checkG711Units(t *testing.T, got []*media.Unit, pkts []rtpPacket, rate int, ulaw bool) []int16 {
	t.Helper()
	if len(got) < len(pkts)/4 || len(got) > len(pkts)/2 {
		t.Fatalf("%d units from %d packets of 20 ms, want a unit every 60 ms", len(got), len(pkts))
	}
	var samples []int16
	p := 0 // the packet a unit starts with
	for i, u := range got {
		want := ticksToDuration(int64(pkts[p].ts-pkts[0].ts), rate)
		if d := u.PTS - got[0].PTS - want; d < -time.Millisecond || d > time.Millisecond || u.DTS != u.PTS {
			t.Fatalf("unit %d at %v after the first, want %v (packet %d)", i, u.PTS-got[0].PTS, want, p)
		}
		rest := u.Payload
		for len(rest) > 0 {
			if p >= len(pkts) || !strings.HasPrefix(string(rest), string(pkts[p].payload)) {
				t.Fatalf("unit %d does not hold packet %d's samples where it should", i, p)
			}
			rest = rest[len(pkts[p].payload):]
			p++
		}
		follows := p < len(pkts) && pkts[p].ts == pkts[p-1].ts+uint32(len(pkts[p-1].payload))
		if follows && time.Duration(len(u.Payload))*time.Second/time.Duration(rate) < g711UnitDuration {
			t.Fatalf("unit %d holds %d samples, want %v of them", i, len(u.Payload), g711UnitDuration)
		}
		samples = audio.DecodeG711(samples, u.Payload, ulaw)
	}
	return samples
}

// TestFrameAudioBadPayloads: an empty payload, G.711 that is not a whole
// number of samples, and an Opus packet that breaks its framing rules are
// decode errors, and nothing is delivered.
func TestFrameAudioBadPayloads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       format.Format
		payload []byte
		want    error
	}{
		{"empty g711", &format.G711{PayloadTyp: 0, MULaw: true, SampleRate: 8000, ChannelCount: 1}, nil, errEmptyUnit},
		{"g711 stereo odd", &format.G711{PayloadTyp: 96, MULaw: true, SampleRate: 8000, ChannelCount: 2}, []byte{1, 2, 3}, errG711Size},
		{"opus framing", &format.Opus{PayloadTyp: 96, ChannelCount: 2}, []byte{0x03, 0x00}, audio.ErrOpusFraming},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &unitSink{}
			r := audioReader(t, tc.f, sink)
			var got error
			r.onDecodeError = func(err error) { got = err }
			p := rtpPacket{marker: true, pt: 96, seq: 1, ts: 1000, payload: tc.payload}
			r.handlers[1].packet(&p, time.Now())
			if !errors.Is(got, tc.want) || len(sink.byTrack(1)) != 0 {
				t.Fatalf("decode error %v, %d units; want %v and none", got, len(sink.byTrack(1)), tc.want)
			}
		})
	}
}

// TestAudioTrackChoice: with sound on, AAC is taken first, then G.711 or
// Opus; audio of other codecs is listed by name but not set up; with sound
// off no audio is taken.
func TestAudioTrackChoice(t *testing.T) {
	aac := &format.MPEG4Audio{PayloadTyp: 97, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3, Config: &mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 16000, ChannelCount: 1}}
	pcmu := &format.G711{PayloadTyp: 0, MULaw: true, SampleRate: 8000, ChannelCount: 1}
	pcma16 := &format.G711{PayloadTyp: 98, SampleRate: 16000, ChannelCount: 2}
	opus := &format.Opus{PayloadTyp: 99, ChannelCount: 2}
	multi := &format.Opus{PayloadTyp: 100, ChannelCount: 6}
	g726 := &format.G726{PayloadTyp: 101, BitRate: 32}
	l16 := &format.Generic{PayloadTyp: 102, RTPMa: "X-VENDOR/8000", ClockRat: 8000}
	for _, tc := range []struct {
		name   string
		sound  bool
		audio  []format.Format // one media each
		want   *media.Track    // the audio track, nil for none
		medias int             // set up
	}{
		{"sound off", false, []format.Format{pcmu}, nil, 1},
		{"aac first", true, []format.Format{pcmu, aac}, &media.Track{Codec: media.AAC, ClockRate: 16000}, 2},
		{"pcmu", true, []format.Format{g726, pcmu}, &media.Track{Codec: media.G711U, ClockRate: 8000, Channels: 1}, 2},
		{"pcma 16k stereo", true, []format.Format{pcma16}, &media.Track{Codec: media.G711A, ClockRate: 16000, Channels: 2}, 2},
		{"opus", true, []format.Format{opus}, &media.Track{Codec: media.Opus, ClockRate: 48000, Channels: 2}, 2},
		{"multichannel opus", true, []format.Format{multi}, &media.Track{Codec: "multiopus", ClockRate: 48000}, 1},
		{"g726", true, []format.Format{g726, l16}, &media.Track{Codec: "G726", ClockRate: 8000}, 1},
		{"unknown", true, []format.Format{l16}, &media.Track{Codec: "X-VENDOR", ClockRate: 8000}, 1},
		{"no audio", true, nil, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc := &description.Session{Medias: []*description.Media{
				{Type: description.MediaTypeVideo, Formats: []format.Format{&format.H264{PayloadTyp: 96, PacketizationMode: 1}}},
			}}
			for _, f := range tc.audio {
				desc.Medias = append(desc.Medias, &description.Media{Type: description.MediaTypeAudio, Formats: []format.Format{f}})
			}
			r, err := newReader(desc, tc.sound)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.medias) != tc.medias || len(r.formats) != tc.medias {
				t.Fatalf("%d medias set up, want %d", len(r.medias), tc.medias)
			}
			if tc.want == nil {
				if len(r.tracks) != 1 {
					t.Fatalf("tracks %v, want video alone", r.tracks)
				}
				return
			}
			got := r.tracks[len(r.tracks)-1]
			if len(r.tracks) != 2 || got.Codec != tc.want.Codec || got.ClockRate != tc.want.ClockRate || got.Channels != tc.want.Channels {
				t.Fatalf("audio track %+v, want %+v", got, tc.want)
			}
			if err := r.makeHandlers(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzFrameAudio: whatever the payload of a G.711 (stereo) or Opus packet,
// the handler never panics; a payload that fails the checks is a decode
// error; the units it delivers hold whole G.711 samples, or the Opus
// packet byte for byte.
func FuzzFrameAudio(f *testing.F) {
	for _, name := range []string{"rtp_pcmu_gstreamer.txt", "rtp_opus_gstreamer.txt", "rtp_opus_ffmpeg.txt"} {
		for _, p := range recordedRTP(f, name)[:3] {
			f.Add(p.payload)
		}
	}
	f.Add([]byte{0x03, 0x00})
	type rig struct {
		r    *reader
		sink *unitSink
		errs int
		opus bool
	}
	var rigs []*rig
	for _, fm := range []format.Format{
		&format.G711{PayloadTyp: 96, MULaw: true, SampleRate: 8000, ChannelCount: 2},
		&format.Opus{PayloadTyp: 96, ChannelCount: 2},
	} {
		rg := &rig{sink: &unitSink{}}
		_, rg.opus = fm.(*format.Opus)
		rg.r = audioReader(f, fm, rg.sink)
		rg.r.onDecodeError = func(error) { rg.errs++ }
		rigs = append(rigs, rg)
	}
	ts := uint32(1000)
	f.Fuzz(func(t *testing.T, payload []byte) {
		ts += 100000 // apart from the packet before: G.711 gathered is handed on
		for _, rg := range rigs {
			rg.sink.units, rg.errs = nil, 0
			p := rtpPacket{marker: true, pt: 96, seq: 1, ts: ts, payload: payload}
			rg.r.handlers[1].packet(&p, time.Now())
			got := rg.sink.byTrack(1)
			for _, u := range got {
				if len(u.Payload) == 0 || (!rg.opus && len(u.Payload)%2 != 0) {
					t.Fatalf("unit of %d bytes", len(u.Payload))
				}
			}
			if !rg.opus {
				if len(got) > 2 || (rg.errs > 0) != (len(payload) == 0 || len(payload)%2 != 0) {
					t.Fatalf("g711 packet of %d bytes: %d units, %d errors", len(payload), len(got), rg.errs)
				}
				continue
			}
			if len(got)+rg.errs != 1 {
				t.Fatalf("%d units and %d errors for one opus packet", len(got), rg.errs)
			}
			if len(got) == 1 && string(got[0].Payload) != string(payload) {
				t.Fatal("unit differs from the payload")
			}
		}
	})
}
