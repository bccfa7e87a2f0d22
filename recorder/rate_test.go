package recorder

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtsp"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// A camera that sends far more than its byte-rate cap, over real RTSP on
// loopback, is held to the cap: what it stores stays within the cap (plus
// the bucket's burst), the units past it are counted as dropped for
// camera_over_rate and the hole they leave is recorded with that cause,
// while a camera within the cap beside it records all along.
func TestCameraRateCap(t *testing.T) {
	const capRate = 400_000 // bytes per second
	srv := synth.NewServer(synth.Config{Addr: "127.0.0.1:0", Cameras: []synth.CameraSpec{
		{Path: "loud", Codec: synth.CodecH264},
		{Path: "quiet", Codec: synth.CodecH264, Small: true},
	}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// The 1280x720 clip at six times its rate: about 1.6 MB/s.
	if err := srv.SetFrameRate("loud", 90); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	bytes := map[string]int64{}
	segs := map[string]int{}
	var gaps []status.Gap
	spool, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir:  t.TempDir(),
		Sync: segmenter.SyncFile,
		Upload: func(_ context.Context, seg segmenter.Segment, _ io.ReadSeeker) error {
			mu.Lock()
			bytes[seg.Camera] += seg.Size
			segs[seg.Camera]++
			mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := spool.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(spool.Close)
	m := metrics.NewRecorder(prometheus.NewRegistry(), func() float64 { return 0 }, func() float64 { return 0 })
	rec := New(Config{
		NodeID:          "n1",
		Spool:           spool,
		Drivers:         ingest.Registry{"rtsp": rtsp.Driver(zap.NewNop(), nil)},
		Keys:            testKeys,
		Source:          ingest.SourceConfig{ReadTimeout: 10 * time.Second, AllowPrivateNetworks: true},
		SegmentDuration: 2 * time.Second,
		MaxCameraRate:   capRate,
		Metrics:         m,
		Journal: journalFunc(func(g status.Gap) {
			mu.Lock()
			gaps = append(gaps, g)
			mu.Unlock()
		}),
	})
	start := time.Now()
	rec.Record(cam("loud", srv.URL("loud")), 1)
	rec.Record(cam("quiet", srv.URL("quiet")), 1)

	dropped := m.FramesDropped.WithLabelValues("camera_over_rate")
	testenv.WaitFor(t, 60*time.Second, "both cameras recording", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return segs["quiet"] >= 3 && segs["loud"] >= 1
	})
	rec.Close()
	elapsed := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	// The bucket's burst, and a segment's boxes on top of the media.
	bound := int64(capRate*elapsed.Seconds()) + 2*rateCapBurst
	t.Logf("in %v: loud camera stored %d bytes in %d segments (bound %d), quiet camera %d bytes in %d segments",
		elapsed, bytes["loud"], segs["loud"], bound, bytes["quiet"], segs["quiet"])
	if bytes["loud"] > bound {
		t.Errorf("loud camera stored %d bytes in %v, cap %d B/s (bound %d)", bytes["loud"], elapsed, capRate, bound)
	}
	if n := counterValue(dropped); n < 100 {
		t.Errorf("%v units dropped over the cap, want many", n)
	}
	if bytes["quiet"] == 0 || segs["quiet"] < 3 {
		t.Errorf("quiet camera stored %d segments, %d bytes", segs["quiet"], bytes["quiet"])
	}
	var overRate bool
	for _, g := range gaps {
		if g.Camera == "quiet" && g.Cause != status.CauseNodeHandover {
			t.Errorf("quiet camera has a gap: %+v", g)
		}
		if g.Camera == "loud" && g.Cause == status.CauseCameraOverRate {
			overRate = true
		}
	}
	if !overRate {
		t.Errorf("no camera_over_rate gap for the loud camera: %+v", gaps)
	}
}

// journalFunc is a Journal.
type journalFunc func(status.Gap)

func (f journalFunc) Record(g status.Gap) { f(g) }

func counterValue(c prometheus.Counter) float64 {
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		return 0
	}
	return d.GetCounter().GetValue()
}
