package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// lockedBuffer collects log output.
type lockedBuffer = testenv.Buffer

// testLogger logs to a buffer (checked by tests) and, on failure, to t.
func testLogger(t *testing.T) (*zap.Logger, *lockedBuffer) {
	buf := &lockedBuffer{}
	enc := zap.NewProductionEncoderConfig()
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), buf, zapcore.DebugLevel)
	t.Cleanup(func() {
		if t.Failed() {
			out := buf.String()
			if len(out) > 20000 {
				out = out[len(out)-20000:]
			}
			t.Logf("vigia log (tail):\n%s", out)
		}
	})
	return zap.New(core), buf
}

// s3Config returns a recorder configuration storing into a fresh bucket of
// a real MinIO.
func s3Config(t *testing.T, m *testenv.MinIOServer) *config.Config {
	t.Helper()
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "node-test"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.WebRTC.Interfaces = "lo" // WebRTC viewers on loopback only
	c.Storage.Backend = "s3"
	c.Storage.Endpoint = m.Endpoint
	c.Storage.AccessKey = m.AccessKey
	c.Storage.SecretKey = m.SecretKey
	c.Storage.Bucket = testenv.NewBucketName(t)
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	c.Ingest.ReadTimeout = config.Duration(3 * time.Second)
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func startApp(t *testing.T, c *config.Config, log *zap.Logger) *app.App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	withMetricsToken(c)
	a, err := app.New(ctx, c, app.Mode{Name: "test", Recorder: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func startSynth(t *testing.T, specs ...synth.CameraSpec) *synth.Server {
	t.Helper()
	srv := synth.NewServer(synth.Config{Addr: "127.0.0.1:0", Cameras: specs})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// openS3 opens the bucket of c for auditing.
func openS3(t *testing.T, c *config.Config) storage.Store {
	t.Helper()
	st, err := s3.New(context.Background(), s3.Options{Endpoint: c.Storage.Endpoint, Bucket: c.Storage.Bucket,
		AccessKey: c.Storage.AccessKey, SecretKey: c.Storage.SecretKey}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// stored is one recording segment found in storage.
type stored struct {
	Key     string
	StartMs int64
	DurMs   int64
	Size    int64
	Meta    map[string]string
}

func (s stored) EndMs() int64 { return s.StartMs + s.DurMs }

// segments lists a camera's segments in start order.
func segments(t *testing.T, st storage.Store, cam string) []stored {
	t.Helper()
	var out []stored
	for obj, err := range storage.Walk(context.Background(), st, "rec/"+cam+"/") {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if integrity.IsManifestKey(obj.Key) {
			continue // the hour's segment manifest (docs/storage.md, Integrity)
		}
		e, err := storage.ParseRecordingKey(obj.Key)
		if err != nil || e.Camera != cam {
			t.Fatalf("unexpected key %q: %v", obj.Key, err)
		}
		if e.Kind == storage.KindGap {
			continue // gap records (gaps lists them)
		}
		out = append(out, stored{Key: obj.Key, StartMs: e.StartMs, DurMs: e.DurMs, Size: obj.Size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartMs < out[j].StartMs })
	return out
}

// waitSegments polls until cam has at least n segments.
func waitSegments(t *testing.T, st storage.Store, cam string, n int, timeout time.Duration) []stored {
	t.Helper()
	var segs []stored
	testenv.WaitFor(t, timeout, fmt.Sprintf("%d segments of camera %s", n, cam), func() bool {
		segs = segments(t, st, cam)
		return len(segs) >= n
	})
	return segs
}

// download fetches an object into a temp file.
func download(t *testing.T, st storage.Store, key string) string {
	t.Helper()
	rc, err := st.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(rc); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(key))
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// probe is what ffprobe reports of a segment's streams and first frame.
type probe struct {
	Video struct {
		Codec    string
		Width    int
		Height   int
		Duration float64
		Frames   int
		FirstKey bool
		// MaxFrameGap is the longest time between consecutive frames, in
		// presentation order.
		MaxFrameGap time.Duration
	}
	Audio string
}

// ffprobePacket is one packet listed by ffprobe.
type ffprobePacket struct {
	Stream int   `json:"stream_index"`
	PTS    int64 `json:"pts"`
}

// maxGap returns the longest time between consecutive packets of a stream
// in presentation order; timeBase is the stream's, as "num/den".
func maxGap(packets []ffprobePacket, stream int, timeBase string) time.Duration {
	var num, den int64
	if _, err := fmt.Sscanf(timeBase, "%d/%d", &num, &den); err != nil || den == 0 {
		return 0
	}
	var pts []int64
	for _, pk := range packets {
		if pk.Stream == stream {
			pts = append(pts, pk.PTS)
		}
	}
	slices.Sort(pts)
	var gap time.Duration
	for i := 1; i < len(pts); i++ {
		gap = max(gap, time.Duration((pts[i]-pts[i-1])*num*int64(time.Second)/den))
	}
	return gap
}

// ffprobe reads a file's streams with one ffprobe run, which decodes every
// frame (-count_frames): the codecs, picture size, frame count and duration,
// the longest time between video packets, and whether the first video frame
// decoded is a keyframe.
func ffprobe(t *testing.T, path string) probe {
	t.Helper()
	var raw struct {
		Streams []struct {
			CodecName string `json:"codec_name"`
			CodecType string `json:"codec_type"`
			Width     int    `json:"width"`
			Height    int    `json:"height"`
			NbFrames  string `json:"nb_read_frames"`
			Duration  string `json:"duration"`
			Index     int    `json:"index"`
			TimeBase  string `json:"time_base"`
		} `json:"streams"`
		// Packets and decoded frames in file order (-show_entries asks for both).
		Entries []struct {
			Type     string `json:"type"`
			Stream   int    `json:"stream_index"`
			PTS      int64  `json:"pts"`
			KeyFrame int    `json:"key_frame"`
		} `json:"packets_and_frames"`
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-show_streams",
		"-show_entries", "packet=stream_index,pts:frame=stream_index,key_frame", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	var packets []ffprobePacket
	for _, e := range raw.Entries {
		if e.Type == "packet" {
			packets = append(packets, ffprobePacket{Stream: e.Stream, PTS: e.PTS})
		}
	}
	var p probe
	for _, s := range raw.Streams {
		switch s.CodecType {
		case "video":
			p.Video.Codec, p.Video.Width, p.Video.Height = s.CodecName, s.Width, s.Height
			p.Video.Duration, _ = strconv.ParseFloat(s.Duration, 64)
			p.Video.Frames, _ = strconv.Atoi(s.NbFrames)
			p.Video.MaxFrameGap = maxGap(packets, s.Index, s.TimeBase)
			for _, e := range raw.Entries {
				if e.Type == "frame" && e.Stream == s.Index {
					p.Video.FirstKey = e.KeyFrame == 1
					break
				}
			}
		case "audio":
			p.Audio = s.CodecName
		}
	}
	return p
}

// auditContinuity checks that consecutive segments neither overlap nor
// leave a gap larger than maxGap, except at the allowed gaps.
func auditContinuity(t *testing.T, segs []stored, maxGap time.Duration, allowed ...[2]int64) {
	t.Helper()
	for i := 1; i < len(segs); i++ {
		gap := segs[i].StartMs - segs[i-1].EndMs()
		if gap < -1 {
			t.Errorf("segment %s overlaps the previous one by %d ms", segs[i].Key, -gap)
		}
		if time.Duration(gap)*time.Millisecond <= maxGap {
			continue
		}
		ok := false
		for _, a := range allowed {
			if segs[i-1].EndMs() >= a[0]-int64(maxGap/time.Millisecond) && segs[i].StartMs <= a[1] {
				ok = true
			}
		}
		if !ok {
			t.Errorf("unexplained gap of %d ms before %s", gap, segs[i].Key)
		}
	}
}

// wantSegments is what every stored segment of a camera must show.
type wantSegments struct {
	Codec         string // ffprobe's name of the video codec: h264, hevc
	Width, Height int
	Audio         string // ffprobe's name of the audio codec, empty for none
	FrameInterval time.Duration
}

// auditRecording checks every segment with ffprobe (video codec and size,
// duration within one frame interval of the key's, keyframe first, frames
// decoded, no frame missing between its first and last, audio codec) and
// that consecutive segments neither overlap nor leave a gap longer than one
// frame interval.
func auditRecording(t *testing.T, st storage.Store, segs []stored, want wantSegments) {
	t.Helper()
	for _, s := range segs {
		p := ffprobe(t, download(t, st, s.Key))
		if p.Video.Codec != want.Codec || p.Video.Width != want.Width || p.Video.Height != want.Height {
			t.Errorf("%s: %s %dx%d, want %s %dx%d", s.Key, p.Video.Codec, p.Video.Width, p.Video.Height, want.Codec, want.Width, want.Height)
		}
		if !p.Video.FirstKey {
			t.Errorf("%s: first frame is not a keyframe", s.Key)
		}
		if d := math.Abs(p.Video.Duration*1000 - float64(s.DurMs)); d > float64(want.FrameInterval/time.Millisecond) {
			t.Errorf("%s: ffprobe says %.3f s, key says %d ms", s.Key, p.Video.Duration, s.DurMs)
		}
		if p.Video.Frames == 0 {
			t.Errorf("%s: no frames decoded", s.Key)
		}
		if p.Video.MaxFrameGap > want.FrameInterval*3/2 {
			t.Errorf("%s: %v between two consecutive frames: a frame is missing inside the segment", s.Key, p.Video.MaxFrameGap)
		}
		if p.Audio != want.Audio {
			t.Errorf("%s: audio %q, want %q", s.Key, p.Audio, want.Audio)
		}
	}
	auditContinuity(t, segs, want.FrameInterval)
}
