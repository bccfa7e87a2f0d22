package recorder

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// avSource plays the H.264 fixture with a second track of codec "X" (an
// audio unit after each frame) until its context ends.
type avSource struct{ clip *synth.Clip }

func (s avSource) Run(ctx context.Context, sink ingest.Sink) error {
	tr := s.clip.Track()
	if err := sink.Tracks([]*media.Track{&tr, {Codec: "X", ClockRate: 8000}}); err != nil {
		return err
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		u := s.clip.Units[i%len(s.clip.Units)]
		u.PTS = time.Duration(i) * 66 * time.Millisecond
		u.DTS, u.Time = u.PTS, time.Now()
		sink.Unit(&u)
		sink.Unit(&media.Unit{Track: 1, PTS: u.PTS, DTS: u.PTS, Payload: []byte("x")})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// swapStage turns track 1 ("X") into AAC, each unit into one with the
// payload "aac", holds each video frame until the next one, and panics
// at its panicAt'th unit when set.
type swapStage struct {
	mu      *sync.Mutex
	log     *[]string
	held    *media.Unit
	n       int
	panicAt int
}

func (s *swapStage) Unit(u *media.Unit, emit func(*media.Unit)) {
	s.n++
	if s.n == s.panicAt {
		panic("stage test panic")
	}
	if u.Track == 1 {
		emit(&media.Unit{Track: 1, PTS: u.PTS, DTS: u.DTS, Payload: []byte("aac")})
		return
	}
	if s.held != nil {
		emit(s.held)
	}
	s.held = u
}

func (s *swapStage) Flush(emit func(*media.Unit)) {
	s.mu.Lock()
	*s.log = append(*s.log, "flush")
	s.mu.Unlock()
	if s.held != nil {
		emit(s.held)
		s.held = nil
	}
}

func (s *swapStage) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.log = append(*s.log, "close")
}

// logConsumer records what the pipeline passes on.
type logConsumer struct {
	mu  *sync.Mutex
	log *[]string
}

func (c logConsumer) Tracks(tracks []*media.Track) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, "tracks "+string(tracks[1].Codec))
}

func (c logConsumer) Unit(u *media.Unit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u.Track == 1 {
		*c.log = append(*c.log, "audio "+string(u.Payload))
	} else {
		*c.log = append(*c.log, "video")
	}
}

func (c logConsumer) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, "consumer closed")
}

// TestPipelineStage: with a StageFactory, the consumers are told of the
// tracks the stage returns and get the units it emits; at the end of the
// run the stage passes on what it holds before the segmenter and the
// consumers close. A stage that panics is removed and the units of the
// track it replaced are no longer recorded.
func TestPipelineStage(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		panicAt int
	}{{"stage", 0}, {"panicking stage", 20}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var log []string
			rg := newRig(t)
			rg.rec.cfg.Drivers["fake"] = func(ingest.Camera, ingest.SourceConfig) (ingest.Source, error) {
				return avSource{clip: clip}, nil
			}
			rg.rec.cfg.Consumers = []stream.ConsumerFactory{func(string) stream.Consumer { return logConsumer{&mu, &log} }}
			rg.rec.cfg.Stage = func(camera string, tracks []*media.Track) ([]*media.Track, stream.Stage) {
				if camera != "c1" || len(tracks) != 2 || tracks[1].Codec != "X" {
					t.Errorf("stage factory called for %s with %v", camera, tracks)
				}
				return []*media.Track{tracks[0], {Codec: media.AAC, ClockRate: 8000}}, &swapStage{mu: &mu, log: &log, panicAt: tc.panicAt}
			}
			rg.rec.Record(cam("c1", "fake://av"), 1)
			testenv.WaitFor(t, 10*time.Second, "60 units at the consumer", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(log) > 60
			})
			rg.rec.Stop("c1", "") // no cause: a handover
			testenv.WaitFor(t, 10*time.Second, "the consumer closed", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(log) > 0 && log[len(log)-1] == "consumer closed"
			})
			mu.Lock()
			defer mu.Unlock()
			if log[0] != "tracks AAC" {
				t.Fatalf("consumer first told %q, want the stage's tracks", log[0])
			}
			counts := map[string]int{}
			for _, l := range log {
				counts[l]++
			}
			if counts["audio x"] != 0 {
				t.Fatalf("%d units of the replaced track reached the consumer", counts["audio x"])
			}
			if tc.panicAt == 0 {
				n := len(log)
				if counts["audio aac"] < 20 || log[n-4] != "flush" || log[n-3] != "video" || log[n-2] != "close" {
					t.Fatalf("%d stage units; log ends %v, want flush, the held frame, close, then the consumer closed", counts["audio aac"], log[n-4:])
				}
				return
			}
			if counts["audio aac"] > tc.panicAt || counts["video"] < 30 || counts["flush"] != 0 {
				t.Fatalf("after the stage panicked at its unit %d: %v", tc.panicAt, counts)
			}
		})
	}
}
