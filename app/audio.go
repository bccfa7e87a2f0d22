package app

import (
	"sync"

	"go.uber.org/zap"

	"github.com/vigia/vigia/audio/transcode"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/stream"
)

// audioStage returns the recorder's stage: a camera's G.711 or Opus audio
// is transcoded to AAC before the segmenter (audio/transcode). Audio that
// cannot be (a codec Vigia does not take, a build without cgo) is recorded
// without sound: counted at each run, and said in the log once per camera
// and codec. Units that do not decode count as decode errors.
func (a *App) audioStage(decodeErr func(error)) stream.StageFactory {
	var counters transcode.Counters
	unrecorded := metrics.NewAudio(a.reg, func() metrics.AudioStats {
		s := counters.Stats()
		return metrics.AudioStats{CPU: s.CPU, Audio: s.Audio}
	}).Unrecorded
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
			a.sourceAudio(camera, nil)
			return tracks, nil
		}
		if st == nil {
			a.sourceAudio(camera, nil)
			return out, nil
		}
		idx := transcode.Transcodable(tracks)
		if tap := a.sourceAudio(camera, tracks[idx]); tap != nil {
			return out, &liveTap{Stage: st, track: idx, tap: tap}
		}
		return out, st
	}
}

// sourceAudio tells the live server of the audio a run of camera has
// before it is transcoded (nil: none); see live.Server.SourceAudio.
func (a *App) sourceAudio(camera string, t *media.Track) func(*media.Unit) {
	if a.live == nil {
		return nil
	}
	return a.live.SourceAudio(camera, t)
}

// liveTap is a run's audio stage that first hands the camera's own audio
// units (G.711) to the live server, whose WebRTC viewers may take them as
// they are.
type liveTap struct {
	stream.Stage
	track int
	tap   func(*media.Unit)
}

// Unit implements stream.Stage.
func (s *liveTap) Unit(u *media.Unit, emit func(*media.Unit)) {
	if u.Track == s.track {
		s.tap(u)
	}
	s.Stage.Unit(u, emit)
}
