package recorder

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// gateConsumer blocks in its first Unit until open is closed, and records
// what it is given.
type gateConsumer struct {
	open chan struct{}
	once sync.Once

	mu  sync.Mutex
	log []string // "tracks" or "unit", in order
}

func (c *gateConsumer) Tracks([]*media.Track) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, "tracks")
}

func (c *gateConsumer) Unit(u *media.Unit) {
	c.once.Do(func() { <-c.open })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, "unit")
}

func (c *gateConsumer) Close() {}

// twoRuns announces a run, sends units, announces a second run and sends
// more, as fast as it can, then reports that every call returned.
type twoRuns struct {
	a, b     *synth.Clip
	n        int
	returned chan struct{}
	more     chan struct{} // then the second run sends a GOP more
}

func (s twoRuns) Run(ctx context.Context, sink ingest.Sink) error {
	for _, clip := range []*synth.Clip{s.a, s.b} {
		tr := clip.Track()
		if err := sink.Tracks([]*media.Track{&tr}); err != nil {
			return err
		}
		for i := range s.n {
			u := clip.Units[i%len(clip.Units)]
			u.PTS = time.Duration(i) * 66 * time.Millisecond
			u.DTS, u.Time = u.PTS, time.Now().Add(u.PTS)
			sink.Unit(&u)
		}
	}
	close(s.returned)
	select {
	case <-s.more:
	case <-ctx.Done():
		return ctx.Err()
	}
	// GOPs of the second run until stopped: one gets in once the queue
	// drained.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := s.n; ; i++ {
		u := s.b.Units[i%30]
		u.PTS = time.Duration(i) * 66 * time.Millisecond
		u.DTS, u.Time = u.PTS, time.Now().Add(u.PTS)
		sink.Unit(&u)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// The source never waits on the pipeline: with its goroutine stuck in a
// consumer, Unit and Tracks return at once (units past the queue are
// dropped), and the second run's tracks reach the consumers after the
// first run's units, before the second's.
func TestPipelineNeverWaits(t *testing.T) {
	big, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	small, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	rg := newRig(t)
	gate := &gateConsumer{open: make(chan struct{})}
	rg.rec.cfg.Consumers = []stream.ConsumerFactory{func(string) stream.Consumer { return gate }}
	rg.rec.cfg.QueueSize = 16
	returned, more := make(chan struct{}), make(chan struct{})
	rg.rec.cfg.Drivers["fake"] = func(ingest.Camera, ingest.SourceConfig) (ingest.Source, error) {
		return twoRuns{a: big, b: small, n: 100, returned: returned, more: more}, nil
	}
	rg.rec.Record(cam("c1", "fake://two-runs"), 1)
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the source waited on a stuck pipeline")
	}
	close(gate.open)
	close(more)
	testenv.WaitFor(t, 10*time.Second, "the second run's units at the consumer", func() bool {
		gate.mu.Lock()
		defer gate.mu.Unlock()
		n := len(gate.log)
		return countOf(gate.log, "tracks") == 2 && gate.log[n-1] == "unit"
	})
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if countOf(gate.log, "tracks") != 2 {
		t.Fatalf("consumer told of %d runs, want 2: %v", countOf(gate.log, "tracks"), gate.log)
	}
	second := slices.Index(gate.log[1:], "tracks") + 1
	if first := countOf(gate.log[:second], "unit"); first > 1+16 {
		t.Errorf("%d units of the first run reached the consumer stuck behind a queue of 16: none dropped", first)
	}
	if gate.log[0] != "tracks" {
		t.Errorf("first call %q, want the first run's tracks", gate.log[0])
	}
}

func countOf(l []string, s string) int {
	n := 0
	for _, x := range l {
		if x == s {
			n++
		}
	}
	return n
}

// floodSource sends n units of a clip as fast as it can, then reports that
// every call returned and waits for the end.
type floodSource struct {
	clip     *synth.Clip
	n        int
	returned chan struct{}
}

func (s floodSource) Run(ctx context.Context, sink ingest.Sink) error {
	tr := s.clip.Track()
	if err := sink.Tracks([]*media.Track{&tr}); err != nil {
		return err
	}
	for i := range s.n {
		u := s.clip.Units[i%len(s.clip.Units)]
		u.PTS = time.Duration(i) * 66 * time.Millisecond
		u.DTS, u.Time = u.PTS, time.Now().Add(u.PTS)
		sink.Unit(&u)
	}
	close(s.returned)
	<-ctx.Done()
	return ctx.Err()
}

// The media waiting in the queues of all cameras is bounded by QueueBytes
// whatever each queue's length: with every pipeline stuck, the queues stop
// taking units at the budget, and what they held is given back once they
// drain.
func TestPipelineQueueBytes(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	rg := newRig(t)
	gate := &gateConsumer{open: make(chan struct{})}
	var openOnce sync.Once
	open := func() { openOnce.Do(func() { close(gate.open) }) }
	defer open() // before the rig closes, even when the test fails
	rg.rec.cfg.Consumers = []stream.ConsumerFactory{func(string) stream.Consumer { return gate }}
	const budget = 400 << 10 // about 20 frames of the 720p clip
	rg.rec.cfg.QueueBytes = budget
	for i := range 3 {
		returned := make(chan struct{})
		url := fmt.Sprintf("flood://cam%d", i)
		rg.rec.cfg.Drivers["flood"] = func(ingest.Camera, ingest.SourceConfig) (ingest.Source, error) {
			return floodSource{clip: clip, n: 200, returned: returned}, nil
		}
		rg.rec.Record(cam(fmt.Sprintf("c%d", i), url), 1)
		select {
		case <-returned:
		case <-time.After(30 * time.Second):
			t.Fatal("the source waited on a stuck pipeline")
		}
	}
	// Each stuck pipeline holds one unit in the consumer; the rest wait.
	if q := rg.rec.queued.Load(); q > budget || q <= 0 {
		t.Fatalf("%d bytes queued by 3 cameras of 200 frames, budget %d", q, budget)
	}
	open()
	testenv.WaitFor(t, 10*time.Second, "the queues drained", func() bool { return rg.rec.queued.Load() == 0 })
}

// One camera holds at most its share of QueueBytes: a camera whose
// pipeline is stuck while it floods fills its share, not the whole
// budget, and the camera beside it goes on recording.
func TestPipelineQueueShare(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	rg := newRig(t)
	gate := &gateConsumer{open: make(chan struct{})}
	var openOnce sync.Once
	open := func() { openOnce.Do(func() { close(gate.open) }) }
	defer open() // before the rig closes, even when the test fails
	rg.rec.cfg.Consumers = []stream.ConsumerFactory{func(id string) stream.Consumer {
		if id == "hog" {
			return gate
		}
		return nil
	}}
	const budget = 12 << 20
	rg.rec.cfg.QueueBytes = budget
	rg.rec.cfg.QueueSize = 1 << 16 // only bytes bound the queues
	returned := make(chan struct{})
	rg.rec.cfg.Drivers["flood"] = func(ingest.Camera, ingest.SourceConfig) (ingest.Source, error) {
		return floodSource{clip: clip, n: 2000, returned: returned}, nil // about 35 MB
	}
	rg.rec.Record(cam("quiet", "rtsp://cam/small"), 1)
	// The quiet camera runs before the other floods, so that the share
	// is already half the budget when the flood comes.
	testenv.WaitFor(t, 10*time.Second, "the quiet camera's pipeline", func() bool { return rg.rec.pipelines.Load() == 1 })
	rg.rec.Record(cam("hog", "flood://hog"), 1)
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the source waited on a stuck pipeline")
	}
	share := rg.rec.queueShare()
	if share != budget/2 {
		t.Fatalf("share of 2 cameras: %d, want %d", share, budget/2)
	}
	if q := rg.rec.queued.Load(); q > share+1<<20 {
		t.Fatalf("%d bytes queued with the stuck camera flooding, its share %d", q, share)
	}
	quietStored := func() int {
		n := 0
		for _, s := range rg.stored() {
			if s.Camera == "quiet" {
				n++
			}
		}
		return n
	}
	from := quietStored()
	testenv.WaitFor(t, 30*time.Second, "the quiet camera's segments while the other is stuck", func() bool {
		return quietStored() >= from+2
	})
	for _, s := range rg.stored() {
		if s.Camera == "hog" {
			t.Errorf("the stuck camera stored a segment")
		}
	}
}
