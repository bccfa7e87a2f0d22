//go:build cgo

package transcode_test

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/audio/transcode"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// BenchmarkTranscode transcodes one camera's audio, 20 ms units, and
// reports what it costs in % of one core: "%core" is the process's CPU
// time per second of audio, "%core-thread" the part the Transcoder
// measures on its threads (its Stats, what vigia_audio_transcode_cpu_
// seconds_total adds up). Sounds: the synthetic cameras' G.711 and Opus,
// and G.711 of loud noise and of a quiet room.
//
//	go test ./audio/transcode -run '^$' -bench Transcode -benchtime 20s
func BenchmarkTranscode(b *testing.B) {
	noise := func(amp float64) [][]byte {
		rng := rand.New(rand.NewPCG(1, 2))
		pcm := make([]int16, 8000*4)
		for i := range pcm {
			pcm[i] = int16(max(-1, min(1, amp*rng.NormFloat64())) * 32767)
		}
		g := audio.EncodeG711(nil, pcm, true)
		var units [][]byte
		for i := 0; i < len(g); i += 160 {
			units = append(units, g[i:i+160])
		}
		return units
	}
	clip := func(codec string) [][]byte {
		c, err := synth.AudioClipFor(codec)
		if err != nil {
			b.Fatal(err)
		}
		var units [][]byte
		for _, u := range c.Units {
			units = append(units, u.Payload)
		}
		return units
	}
	for _, bc := range []struct {
		name  string
		track media.Track
		per   time.Duration
		units [][]byte
	}{
		{"g711 synthetic camera", media.Track{Codec: media.G711U, ClockRate: 8000}, 20 * time.Millisecond, clip(synth.AudioPCMU)},
		{"g711 loud noise", media.Track{Codec: media.G711U, ClockRate: 8000}, 20 * time.Millisecond, noise(0.3)},
		{"g711 quiet room", media.Track{Codec: media.G711U, ClockRate: 8000}, 20 * time.Millisecond, noise(0.003)},
		{"opus synthetic camera", media.Track{Codec: media.Opus, ClockRate: 48000}, 20 * time.Millisecond, clip(synth.AudioOpus)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tc, err := transcode.New(&bc.track)
			if err != nil {
				b.Fatal(err)
			}
			defer tc.Close()
			emit := func(*media.Unit) {}
			u := &media.Unit{Track: 1}
			c0 := processCPU(b)
			n := 0
			for i := 0; b.Loop(); i++ {
				u.PTS = time.Duration(i) * bc.per
				u.Payload = bc.units[i%len(bc.units)]
				if err := tc.Unit(u, emit); err != nil {
					b.Fatal(err)
				}
				n++
			}
			cpu := processCPU(b) - c0
			b.ReportMetric(100*float64(cpu)/float64(time.Duration(n)*bc.per), "%core")
			st := tc.Stats()
			b.ReportMetric(100*float64(st.CPU)/float64(st.Audio), "%core-thread")
		})
	}
}

// processCPU is the CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkToOpus turns one camera's AAC into Opus for WebRTC listeners,
// the live transcoder's work, and reports it in % of one core as
// BenchmarkTranscode does. Sounds: the synthetic cameras' AAC (16 kHz
// mono) and the AAC the recorder makes of G.711 (8 kHz mono).
//
//	go test ./audio/transcode -run '^$' -bench ToOpus -benchtime 20s
func BenchmarkToOpus(b *testing.B) {
	fixture, err := synth.AudioClipFor(synth.AudioAAC)
	if err != nil {
		b.Fatal(err)
	}
	g711, err := synth.AudioClipFor(synth.AudioPCMU)
	if err != nil {
		b.Fatal(err)
	}
	// The G.711 clip made AAC by the recorder's transcoder.
	tc, err := transcode.New(&media.Track{Codec: media.G711U, ClockRate: g711.Rate, Channels: 1})
	if err != nil {
		b.Fatal(err)
	}
	var fromG711 []*media.Unit
	for i, u := range g711.Units {
		pts := time.Duration(i*g711.UnitSamples) * time.Second / time.Duration(g711.Rate)
		if err := tc.Unit(&media.Unit{PTS: pts, Payload: u.Payload}, func(o *media.Unit) { fromG711 = append(fromG711, o) }); err != nil {
			b.Fatal(err)
		}
	}
	g711Track := tc.Track()
	tc.Close()
	fixtureTrack := fixture.Track()
	var fixtureUnits []*media.Unit
	for i := range fixture.Units {
		fixtureUnits = append(fixtureUnits, &fixture.Units[i])
	}
	for _, bc := range []struct {
		name  string
		track *media.Track
		units []*media.Unit
	}{
		{"aac 16 kHz synthetic camera", &fixtureTrack, fixtureUnits},
		{"aac 8 kHz from g711", g711Track, fromG711},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o, err := transcode.NewToOpus(bc.track)
			if err != nil {
				b.Fatal(err)
			}
			defer o.Close()
			per := time.Duration(1024) * time.Second / time.Duration(bc.track.AAC.SampleRate)
			emit := func(transcode.OpusPacket) {}
			u := &media.Unit{}
			c0 := processCPU(b)
			n := 0
			for i := 0; b.Loop(); i++ {
				u.PTS = time.Duration(i) * per
				u.Payload = bc.units[i%len(bc.units)].Payload
				if err := o.Unit(u, emit); err != nil {
					b.Fatal(err)
				}
				n++
			}
			cpu := processCPU(b) - c0
			b.ReportMetric(100*float64(cpu)/float64(time.Duration(n)*per), "%core")
			st := o.Stats()
			b.ReportMetric(100*float64(st.CPU)/float64(st.Audio), "%core-thread")
		})
	}
}
