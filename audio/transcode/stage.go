package transcode

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/stream"
)

// MaxHold is the longest a video frame waits in a Stage for the audio of
// its time, in video time: more than the encoder's delay (two AAC frames,
// 256 ms at 8 kHz) and a few audio packets. Video that has no audio to
// wait for (audio that stopped) is passed on this late.
const MaxHold = 600 * time.Millisecond

var _ stream.Stage = (*Stage)(nil)

// Stage is the audio step of one run of a camera's source, between its
// queue and its segmenter. The units of the transcoded track go through a
// Transcoder and come out as AAC frames; video frames wait (at most
// MaxHold) for the audio of their time, so that units reach the segmenter
// in time order and a segment cut at a keyframe holds the audio before it.
// Units of other tracks pass at once. It takes ownership of the units it
// is given (and releases the audio units it consumes); it is not safe for
// concurrent use.
type Stage struct {
	tc       *Transcoder
	audio    int // index of the transcoded track
	video    int // index of the video track, -1 without
	started  bool
	held     []*media.Unit // video units waiting, in arrival order
	ready    []*media.Unit // AAC frames not passed on yet
	newest   time.Duration // DTS of the newest video unit held
	onError  func(error)
	counters *Counters
	counted  Stats
	collect  func(*media.Unit)
}

// StageConfig configures a Stage.
type StageConfig struct {
	// OnError, optional, receives the error of each unit that cannot be
	// transcoded (it is dropped).
	OnError func(error)

	// Counters, optional, receive the work of the Stage's Transcoder.
	Counters *Counters
}

// Counters add up the work of many Transcoders. They are safe for
// concurrent use.
type Counters struct {
	cpu, audio, frames atomic.Int64
}

// Stats returns the sums so far.
func (c *Counters) Stats() Stats {
	return Stats{CPU: time.Duration(c.cpu.Load()), Audio: time.Duration(c.audio.Load()), Frames: c.frames.Load()}
}

func (c *Counters) add(d Stats) {
	c.cpu.Add(int64(d.CPU))
	c.audio.Add(int64(d.Audio))
	c.frames.Add(d.Frames)
}

// Transcodable returns the index of the track of tracks a Stage would
// transcode: the first G.711 or Opus track when no AAC track is there;
// -1 for none.
func Transcodable(tracks []*media.Track) int {
	idx := -1
	for i, t := range tracks {
		switch {
		case t.Codec == media.AAC:
			return -1
		case Supported(t.Codec) && idx < 0:
			idx = i
		}
	}
	return idx
}

// NewStage builds the Stage of a run whose tracks are tracks. It returns
// the tracks to record, the transcoded one replaced by its AAC track, and
// the Stage; with nothing to transcode, tracks and a nil Stage. An error
// (ErrUnavailable, ErrCodec) means the audio cannot be transcoded.
func NewStage(tracks []*media.Track, cfg StageConfig) ([]*media.Track, *Stage, error) {
	idx := Transcodable(tracks)
	if idx < 0 {
		return tracks, nil, nil
	}
	tc, err := New(tracks[idx])
	if err != nil {
		return tracks, nil, err
	}
	s := &Stage{tc: tc, audio: idx, video: -1, onError: cfg.OnError, counters: cfg.Counters}
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			s.video = i
			break
		}
	}
	s.collect = func(u *media.Unit) { s.ready = append(s.ready, u) }
	out := slices.Clone(tracks)
	out[idx] = tc.Track()
	return out, s, nil
}

// Unit takes u and passes on, through emit, the units that are due.
func (s *Stage) Unit(u *media.Unit, emit func(*media.Unit)) {
	switch u.Track {
	case s.audio:
		s.started = true
		err := s.tc.Unit(u, s.collect)
		u.Release()
		if err != nil && s.onError != nil {
			s.onError(err)
		}
		s.count()
	case s.video:
		if !s.started {
			emit(u)
			return
		}
		s.held = append(s.held, u)
		s.newest = u.DTS
	default:
		emit(u)
		return
	}
	s.drain(emit, false)
}

// Flush passes on every unit held and the last AAC frames: the run is
// over.
func (s *Stage) Flush(emit func(*media.Unit)) {
	if err := s.tc.Flush(s.audio, s.collect); err != nil && s.onError != nil {
		s.onError(err)
	}
	s.count()
	s.drain(emit, true)
}

// drain passes on the units that are due, in time order: an AAC frame
// when no video frame waiting is older; a video frame when audio has been
// emitted past it, or it has waited MaxHold (or all, with all).
func (s *Stage) drain(emit func(*media.Unit), all bool) {
	for len(s.held) > 0 || len(s.ready) > 0 {
		var u *media.Unit
		switch {
		case len(s.held) > 0 && (len(s.ready) == 0 || s.held[0].DTS < s.ready[0].DTS):
			h, ok := s.tc.Horizon()
			if len(s.ready) == 0 && !all && !(ok && s.held[0].DTS < h) && s.newest-s.held[0].DTS < MaxHold {
				return
			}
			u = s.held[0]
			s.held = slices.Delete(s.held, 0, 1)
		default:
			u = s.ready[0]
			s.ready = slices.Delete(s.ready, 0, 1)
		}
		emit(u)
	}
}

// count adds the Transcoder's new work to the counters.
func (s *Stage) count() {
	if s.counters == nil {
		return
	}
	st := s.tc.Stats()
	s.counters.add(Stats{CPU: st.CPU - s.counted.CPU, Audio: st.Audio - s.counted.Audio, Frames: st.Frames - s.counted.Frames})
	s.counted = st
}

// Close frees the Stage; units still held are released.
func (s *Stage) Close() {
	s.tc.Close()
	for _, u := range s.held {
		u.Release()
	}
	s.held, s.ready = nil, nil
}
