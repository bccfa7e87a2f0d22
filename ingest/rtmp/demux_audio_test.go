package rtmp

import (
	"bytes"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest/rtmp/wire"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// TestDemuxAudioFormats: G.711 audio tags (as FFmpeg writes them: 8 kHz,
// the type bit for stereo) give a G.711 track and one unit per tag, timed
// by the tag, whether the first comes before the first keyframe or right
// after it (FFmpeg's order: G.711 has no configuration to send first); a
// sound format Vigia does not record is listed by name and counted once;
// audio that starts later announces the tracks again at the next keyframe.
func TestDemuxAudioFormats(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindConfig, Data: wire.MarshalAVCConfig(clip.SPS, clip.PPS)}.Marshal()
	key := wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindFrames, Data: wire.JoinNALUs(clip.Units[0].NALUs)}.Marshal()
	delta := wire.VideoTag{Codec: wire.VideoH264, Kind: wire.KindFrames, Data: wire.JoinNALUs(clip.Units[1].NALUs)}.Marshal()
	samples := bytes.Repeat([]byte{0x55}, 160)
	for _, tc := range []struct {
		name     string
		hdr      byte   // the audio tag's first byte
		order    string // of the first audio tag: "before" the first keyframe, "after" it, or "late" (after two frames)
		want     media.Track
		units    int
		decodeEr int
	}{
		{"pcmu mono", 0x82, "before", media.Track{Codec: media.G711U, ClockRate: 8000, Channels: 1}, 5, 0},
		{"pcmu after the keyframe", 0x82, "after", media.Track{Codec: media.G711U, ClockRate: 8000, Channels: 1}, 6, 0},
		{"pcma stereo", 0x73, "before", media.Track{Codec: media.G711A, ClockRate: 8000, Channels: 2}, 5, 0},
		{"pcmu late", 0x82, "late", media.Track{Codec: media.G711U, ClockRate: 8000, Channels: 1}, 3, 0},
		{"mp3", 0x2f, "before", media.Track{Codec: "MP3"}, 0, 1},
		{"speex", 0xb6, "after", media.Track{Codec: "Speex"}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &collector{}
			d := newDemuxer(sink, true)
			errs := 0
			d.onDecodeError = func(error) { errs++ }
			send := func(typ uint8, ts uint32, payload []byte) {
				if err := d.message(&wire.Message{Type: typ, Timestamp: ts, Payload: payload}); err != nil {
					t.Fatal(err)
				}
			}
			audioTag := append([]byte{tc.hdr}, samples...)
			late := tc.order == "late"
			send(wire.TypeVideo, 0, cfg)
			if tc.order == "before" {
				send(wire.TypeAudio, 0, audioTag)
			}
			send(wire.TypeVideo, 0, key)
			switch tc.order {
			case "after":
				send(wire.TypeAudio, 0, audioTag)
			case "late":
				send(wire.TypeVideo, 10, delta)
			}
			for i := 1; i <= 5; i++ {
				if late && i == 3 {
					send(wire.TypeVideo, uint32(i*20), key)
				}
				send(wire.TypeAudio, uint32(i*20), audioTag)
			}
			tracks := sink.lastTracks()
			if len(tracks) != 2 {
				t.Fatalf("tracks %v, want video and audio", tracks)
			}
			if a := tracks[1]; a.Codec != tc.want.Codec || a.ClockRate != tc.want.ClockRate || a.Channels != tc.want.Channels {
				t.Fatalf("audio track %+v, want %+v", a, tc.want)
			}
			if late != (len(sink.tracks) == 2) {
				t.Fatalf("tracks announced %d times", len(sink.tracks))
			}
			var audio []*media.Unit
			video := 0
			for _, u := range sink.units {
				if u.Track == 1 {
					audio = append(audio, u)
				} else {
					video++
				}
			}
			if want := map[bool]int{false: 1, true: 3}[late]; video != want {
				t.Fatalf("%d video frames delivered, want %d", video, want)
			}
			if len(audio) != tc.units || errs != tc.decodeEr {
				t.Fatalf("%d audio units, %d decode errors; want %d, %d", len(audio), errs, tc.units, tc.decodeEr)
			}
			for i, u := range audio {
				want := time.Duration(5-len(audio)+i+1) * 20 * time.Millisecond
				if late {
					want -= 60 * time.Millisecond // the run starts at the second keyframe
				}
				if u.PTS != want || !bytes.Equal(u.Payload, samples) {
					t.Fatalf("audio unit %d at %v with %d bytes, want %v and %d", i, u.PTS, len(u.Payload), want, len(samples))
				}
			}
		})
	}
}
