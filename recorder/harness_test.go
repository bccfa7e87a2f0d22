package recorder

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
)

// clipSource plays a fixture clip in real time (the bubble's time in
// synctest tests), as a camera would, until its context ends.
type clipSource struct {
	clip *synth.Clip
	late time.Duration // the first frame's wall-clock time lags by this much (a backlog read late)
}

func (s clipSource) Run(ctx context.Context, sink ingest.Sink) error {
	tr := s.clip.Track()
	if err := sink.Tracks([]*media.Track{&tr}); err != nil {
		return err
	}
	step := time.Duration(float64(time.Second) / s.clip.FPS)
	t0 := time.Now().Add(-s.late)
	tick := time.NewTicker(step)
	defer tick.Stop()
	for i := 0; ; i++ {
		u := s.clip.Units[i%len(s.clip.Units)]
		u.PTS = time.Duration(i) * step
		u.DTS = u.PTS
		u.Time = t0.Add(u.PTS)
		sink.Unit(&u)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// failSource fails at once with err.
type failSource struct{ err error }

func (s failSource) Run(context.Context, ingest.Sink) error { return s.err }

// rig is a Recorder over a real spool, a driver that plays fixture clips
// (or fails for URLs with the password "wrong"), an in-memory end store and
// an in-memory object store.
type rig struct {
	t   *testing.T
	rec *Recorder

	mu       sync.Mutex
	runs     int      // runs started (consumers built)
	dials    []string // URLs the driver was asked for
	segments []segmenter.Segment
	statuses []status.Status
	gaps     []status.Gap
	ends     *memEnds
}

// memEnds is an in-memory EndStore; get, when set, runs before each read.
type memEnds struct {
	mu   sync.Mutex
	ends map[string]time.Time
	puts int
	get  func()
}

func (m *memEnds) GetEnd(ctx context.Context, id string) (time.Time, bool, error) {
	m.mu.Lock()
	hook := m.get
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.ends[id]
	return e, ok, nil
}

func (m *memEnds) PutEnd(_ context.Context, id string, end time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ends[id] = end
	m.puts++
	return nil
}

func (m *memEnds) end(id string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.ends[id]
	return e, ok
}

func newRig(t *testing.T) *rig {
	t.Helper()
	rg := &rig{t: t, ends: &memEnds{ends: map[string]time.Time{}}}
	spool, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir:  t.TempDir(),
		Sync: segmenter.SyncFile,
		Upload: func(_ context.Context, seg segmenter.Segment, body io.ReadSeeker) error {
			rg.mu.Lock()
			rg.segments = append(rg.segments, seg)
			rg.mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := spool.Start(); err != nil {
		t.Fatal(err)
	}
	drive := func(cam ingest.Camera, _ ingest.SourceConfig) (ingest.Source, error) {
		rg.mu.Lock()
		rg.dials = append(rg.dials, cam.URL)
		rg.mu.Unlock()
		if strings.Contains(cam.URL, ":wrong@") {
			return failSource{err: ingest.Permanent(ingest.ReasonAuth, ingest.ErrUnsupportedScheme)}, nil
		}
		small := strings.HasSuffix(cam.URL, "/small")
		clip, err := synth.Fixture(synth.CodecH264, small)
		if err != nil {
			return nil, err
		}
		src := clipSource{clip: clip}
		if strings.Contains(cam.URL, "/late") {
			src.late = 3 * time.Second
		}
		return src, nil
	}
	rg.rec = New(Config{
		NodeID:          "n1",
		Spool:           spool,
		Drivers:         ingest.Registry{"rtsp": drive},
		Keys:            testKeys,
		Ends:            rg.ends,
		SegmentDuration: 4 * time.Second,
		Consumers: []stream.ConsumerFactory{func(string) stream.Consumer {
			rg.mu.Lock()
			rg.runs++
			rg.mu.Unlock()
			return nil
		}},
		Statuses: rg,
		Journal:  rg,
	})
	t.Cleanup(func() {
		rg.rec.Close()
		spool.Close()
	})
	return rg
}

// EnqueueStatus is the rig's Statuses.
func (rg *rig) EnqueueStatus(s status.Status) error {
	rg.mu.Lock()
	rg.statuses = append(rg.statuses, s)
	rg.mu.Unlock()
	return nil
}

// Record is the rig's Journal.
func (rg *rig) Record(g status.Gap) {
	rg.mu.Lock()
	rg.gaps = append(rg.gaps, g)
	rg.mu.Unlock()
}

// testKeys seal the source URLs of the tests' camera records.
var testKeys = func() *sign.Keys {
	k, err := sign.New([]byte("recorder test secret, 32 bytes at least"))
	if err != nil {
		panic(err)
	}
	return k
}()

// cam returns an RTSP camera's record, url sealed; "unsealable" is kept
// as is, and cannot be opened.
func cam(id, url string) camera.Config {
	sealed := url
	if url != "unsealable" {
		var err error
		if sealed, err = camera.Seal(testKeys, url); err != nil {
			panic(err)
		}
	}
	return camera.Config{ID: id, ConnectionType: camera.RTSP, SealedURL: sealed}
}

func (rg *rig) dialed() []string {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	return append([]string(nil), rg.dials...)
}

func (rg *rig) stored() []segmenter.Segment {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	return append([]segmenter.Segment(nil), rg.segments...)
}

func (rg *rig) status(id string) status.Status {
	s, _ := rg.rec.Status(id)
	return s
}
