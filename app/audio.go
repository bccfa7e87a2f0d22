package app

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/audio/transcode"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/stream"
)

// audioStage returns the recorder's stage: a camera's G.711 or Opus audio
// is transcoded to AAC before the segmenter (audio/transcode). Audio that
// cannot be (a codec Vigia does not take, a build without cgo) is recorded
// without sound: counted at each run, and said in the log once per camera
// and codec. Units that do not decode count as decode errors.
func (a *App) audioStage(decodeErr func(error)) stream.StageFactory {
	var counters transcode.Counters
	unrecorded := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vigia_audio_unrecorded_tracks_total",
		Help: "Runs of cameras whose audio is not recorded because it cannot be transcoded to AAC, by codec.",
	}, []string{"codec"})
	for _, c := range []string{string(media.G711U), string(media.G711A), string(media.Opus), "other"} {
		unrecorded.WithLabelValues(c)
	}
	a.reg.MustRegister(unrecorded,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_audio_transcode_cpu_seconds_total", Help: "CPU time spent transcoding camera audio to AAC.",
		}, func() float64 { return counters.Stats().CPU.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_audio_transcoded_seconds_total", Help: "Camera audio transcoded to AAC, in seconds of audio.",
		}, func() float64 { return counters.Stats().Audio.Seconds() }),
	)
	log := a.log.With(zap.String("component", "audio"))
	var mu sync.Mutex
	said := map[string]media.Codec{} // camera → codec last said
	notRecorded := func(camera string, codec media.Codec, err error) {
		label := "other"
		if transcode.Supported(codec) {
			label = string(codec)
		}
		unrecorded.WithLabelValues(label).Inc()
		mu.Lock()
		defer mu.Unlock()
		if said[camera] == codec {
			return
		}
		said[camera] = codec
		name := string(codec)
		if len(name) > 40 {
			name = name[:40] // named by the camera
		}
		fields := []zap.Field{zap.String("camera", camera), zap.String("codec", name)}
		if err != nil {
			fields = append(fields, zap.Error(err))
		}
		log.Warn("camera audio not recorded: it cannot be transcoded to AAC", fields...)
	}
	return func(camera string, tracks []*media.Track) ([]*media.Track, stream.Stage) {
		for _, t := range tracks {
			if !t.Codec.Known() {
				notRecorded(camera, t.Codec, nil)
			}
		}
		out, st, err := transcode.NewStage(tracks, transcode.StageConfig{OnError: decodeErr, Counters: &counters})
		if err != nil {
			notRecorded(camera, tracks[transcode.Transcodable(tracks)].Codec, err)
			return tracks, nil
		}
		if st == nil {
			return out, nil
		}
		return out, st
	}
}
