package e2e

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
)

// longTest skips heavy tests (hundreds of cameras, several recorder
// processes) unless VIGIA_LONG=1, which `make soak` sets. The default
// `make test` runs the short fault and security subset.
func longTest(t *testing.T) {
	t.Helper()
	if os.Getenv("VIGIA_LONG") != "1" {
		t.Skip("long test: runs with VIGIA_LONG=1 (make soak)")
	}
}

// e2eMetricsToken is the http.metrics_token of the nodes the tests start.
const e2eMetricsToken = "e2e-metrics-token-0123456789abcdef"

// withMetricsToken gives c the tests' metrics token unless it has one.
func withMetricsToken(c *config.Config) {
	if c.HTTP.MetricsToken == "" {
		c.HTTP.MetricsToken = e2eMetricsToken
	}
}

// scrapeMetrics reads a node's /metrics, with the tests' metrics token,
// into name{labels} → value.
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e2eMetricsToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %s answered %s", url, res.Status)
	}
	return parseMetrics(res.Body)
}

func parseMetrics(r io.Reader) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// finished records, for each stored segment, the wall time at which the
// recorder finished it (stored time minus upload latency): the real time
// of the segment's end, to hold its key against.
type finished struct {
	mu sync.Mutex
	at map[string]map[int64]time.Time // camera → start ms → finished at
}

func newFinished() *finished { return &finished{at: map[string]map[int64]time.Time{}} }

func (f *finished) hook(seg segmenter.Segment, latency time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.at[seg.Camera]
	if m == nil {
		m = map[int64]time.Time{}
		f.at[seg.Camera] = m
	}
	m[seg.StartMs()] = time.Now().Add(-latency)
}

func (f *finished) get(cam string, startMs int64) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.at[cam][startMs]
	return at, ok
}

// auditSegments reads every segment with ffprobe (codec, keyframe first,
// duration against the key within one frame interval) and checks there
// are no duplicate starts.
func auditSegments(t *testing.T, st storage.Store, segs []stored, codec string) {
	t.Helper()
	seen := map[int64]string{}
	for _, s := range segs {
		if k, dup := seen[s.StartMs]; dup {
			t.Errorf("two segments start at %d: %s and %s", s.StartMs, k, s.Key)
		}
		seen[s.StartMs] = s.Key
		p := ffprobe(t, download(t, st, s.Key))
		if p.Video.Codec != codec || !p.Video.FirstKey || p.Video.Frames == 0 {
			t.Errorf("%s: codec %q, keyframe first %v, %d frames", s.Key, p.Video.Codec, p.Video.FirstKey, p.Video.Frames)
		}
		if d := math.Abs(p.Video.Duration*1000 - float64(s.DurMs)); d > float64(frameInterval/time.Millisecond)+1 {
			t.Errorf("%s: ffprobe says %.3f s, key says %d ms", s.Key, p.Video.Duration, s.DurMs)
		}
	}
}

// auditWallTime checks that the stored timeline runs with wall time: over
// the segments finished after from, the span of their ends in storage and
// the span of the times they were really finished differ by at most 1 %
// (plus 150 ms of scheduling), and each segment's end lies within maxOff
// of the time it was finished.
func auditWallTime(t *testing.T, f *finished, cam string, segs []stored, from time.Time, maxOff time.Duration) {
	t.Helper()
	var first, last *stored
	var firstAt, lastAt time.Time
	for i := range segs {
		at, ok := f.get(cam, segs[i].StartMs)
		if !ok || at.Before(from) {
			continue
		}
		if off := time.UnixMilli(segs[i].EndMs()).Sub(at); off > maxOff || off < -maxOff {
			t.Errorf("%s: %s ends %v away from when it was finished", cam, segs[i].Key, off)
		}
		if first == nil {
			first, firstAt = &segs[i], at
		}
		last, lastAt = &segs[i], at
	}
	if first == nil || first == last {
		t.Fatalf("%s: fewer than two segments finished after %v", cam, from)
	}
	stored := time.Duration(last.EndMs()-first.EndMs()) * time.Millisecond
	wall := lastAt.Sub(firstAt)
	if e := math.Abs(float64(stored - wall)); e > 0.01*float64(wall)+float64(150*time.Millisecond) {
		t.Errorf("%s: %v of recording stored for %v of wall time (%.2f %%)", cam, stored, wall, 100*e/float64(wall))
	}
	t.Logf("%s: %v of recording for %v of wall time", cam, stored, wall)
}
