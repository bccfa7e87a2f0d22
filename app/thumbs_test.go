//go:build cgo

package app

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/thumbs"
)

// thumbsApp is the part of an App that makes thumbnails, on an fs store.
func thumbsApp(t *testing.T) *App {
	t.Helper()
	st, err := fs.New(t.TempDir(), fs.Options{BaseURL: "http://127.0.0.1/media", Secret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	a := &App{cfg: config.Default(), log: zap.NewNop(), reg: metrics.NewRegistry(), store: st,
		mode: Mode{DecoderCommand: testDecoderCommand(t)}}
	a.startDecoders()
	t.Cleanup(func() {
		a.closeImaging()
		a.decoders.Close()
	})
	return a
}

func getObject(t *testing.T, st storage.Store, key string) []byte {
	t.Helper()
	r, err := st.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func listKeys(t *testing.T, st storage.Store, prefix string) []string {
	t.Helper()
	var keys []string
	opts := storage.ListOptions{}
	for {
		page, err := st.List(context.Background(), prefix, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		if page.Next == "" {
			return keys
		}
		opts.StartAfter = page.Next
	}
}

// checkJPEG decodes a stored JPEG with image/jpeg and with FFmpeg and
// returns its size.
func checkJPEG(t *testing.T, st storage.Store, key string) (w, h int) {
	t.Helper()
	data := getObject(t, st, key)
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: image/jpeg: %v", key, err)
	}
	p := filepath.Join(t.TempDir(), "x.jpg")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffmpeg", "-v", "error", "-xerror", "-i", p, "-f", "null", "-").CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("%s: ffmpeg: %v %s", key, err, out)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

// TestMinuteAndHourlyThumbnails feeds 3.5 minutes of media time across an
// hour boundary, much faster than real time, and checks one thumbnail per
// minute and per hour at the keys of the storage layout.
func TestMinuteAndHourlyThumbnails(t *testing.T) {
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		t.Run(codec, func(t *testing.T) {
			a := thumbsApp(t)
			factory := a.startThumbs()
			if factory == nil {
				t.Fatal("no thumbnail consumer: decoding unavailable")
			}
			clip, err := synth.Fixture(codec, false)
			if err != nil {
				t.Fatal(err)
			}
			const cam = "cam-1"
			c := factory(cam)
			track := clip.Track()
			c.Tracks([]*media.Track{&track})
			// Keyframes every 2 s at odd seconds: the thumbnail of each
			// minute is the keyframe 1 s after the boundary.
			base := time.Date(2025, 3, 1, 10, 58, 41, 0, time.UTC)
			frames := int(3.5 * 60 * clip.FPS)
			for i := 0; i < frames; i++ {
				u := clip.Units[i%len(clip.Units)]
				u.PTS = time.Duration(float64(i) * float64(time.Second) / clip.FPS)
				u.DTS = u.PTS
				u.Time = base.Add(u.PTS)
				c.Unit(&u)
			}
			c.Close()

			wantMinute := []string{}
			for _, sec := range []string{"10:58:41", "10:59:01", "11:00:01", "11:01:01", "11:02:01"} {
				tm, _ := time.Parse("2006-01-02 15:04:05", "2025-03-01 "+sec)
				wantMinute = append(wantMinute, storage.MinuteThumbKey(cam, tm))
			}
			h10 := time.Date(2025, 3, 1, 10, 58, 41, 0, time.UTC)
			h11 := time.Date(2025, 3, 1, 11, 0, 1, 0, time.UTC)
			wantHourly := []string{storage.HourlyThumbKey(cam, h10), storage.HourlyThumbKey(cam, h11)}
			if wantHourly[1] != "thumbs-hourly/cam-1/2025/03/01/1740826801.jpg" || wantMinute[2] != "thumbs/cam-1/2025/03/01/11/1740826801.jpg" {
				t.Fatalf("unexpected key layout: %v %v", wantHourly, wantMinute)
			}

			var minute, hourly []string
			testenv.WaitForNil(t, 60*time.Second, "the thumbnails", func() error {
				minute = listKeys(t, a.store, storage.PrefixThumbs+cam+"/")
				hourly = listKeys(t, a.store, storage.PrefixHourlyThumbs+cam+"/")
				if len(minute) < len(wantMinute) || len(hourly) < len(wantHourly) {
					return fmt.Errorf("minute %v, hourly %v", minute, hourly)
				}
				return nil
			})
			slices.Sort(minute)
			if !slices.Equal(minute, wantMinute) {
				t.Fatalf("minute thumbnails %v, want %v", minute, wantMinute)
			}
			if !slices.Equal(hourly, wantHourly) {
				t.Fatalf("hourly thumbnails %v, want %v", hourly, wantHourly)
			}
			for _, k := range append(minute, hourly...) {
				if w, h := checkJPEG(t, a.store, k); w != 320 || h != 180 {
					t.Fatalf("%s is %dx%d, want 320x180", k, w, h)
				}
			}
			st := a.thumbs.svc.Stats()
			t.Logf("%s: %d units, %d minute + %d hourly thumbnails, CPU %s", codec, frames, st.Minute, st.Hourly, st.CPU)
			if st.Dropped != 0 || st.DecodeErrors != 0 || st.StoreErrors != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// recorderApp starts a whole recorder node (fs storage, embedded NATS)
// recording one synthetic 720p H.264 camera in 4 s segments.
func recorderApp(t *testing.T) (*App, string) {
	t.Helper()
	srv := synth.NewServer(synth.Config{Addr: "127.0.0.1:0", Cameras: []synth.CameraSpec{{Path: "cam1", Codec: synth.CodecH264}}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "node-test"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.Recording.SegmentDuration = config.Duration(4 * time.Second)
	c.Ingest.AllowPrivateNetworks = true
	c.Cameras = []config.Camera{{ID: "cam1", URL: srv.URL("cam1"), HistoryDays: 7}}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := New(ctx, c, Mode{Name: "test", Recorder: true, DecoderCommand: testDecoderCommand(t)}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, "cam1"
}

// lumaPSNR compares the luma of a JPEG with FFmpeg's full-range luma of
// frame n of the MP4 file.
func lumaPSNR(t *testing.T, jpg []byte, mp4 string, n int) float64 {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		t.Fatal(err)
	}
	y, ok := img.(*image.YCbCr)
	if !ok {
		t.Fatalf("JPEG decodes to %T", img)
	}
	w, h := y.Rect.Dx(), y.Rect.Dy()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", mp4,
		"-vf", "select=eq(n\\,"+strconv.Itoa(n)+"),scale=out_range=full,format=gray",
		"-frames:v", "1", "-f", "rawvideo", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	if len(out) != w*h {
		t.Fatalf("ffmpeg frame has %d bytes, want %d", len(out), w*h)
	}
	var se float64
	for row := 0; row < h; row++ {
		for x := 0; x < w; x++ {
			d := float64(y.Y[row*y.YStride+x]) - float64(out[row*w+x])
			se += d * d
		}
	}
	return 10 * math.Log10(255*255/(se/float64(w*h)))
}

// TestSnapshots records a synthetic camera: a snapshot request over NATS
// returns a stored full-resolution JPEG, and a snapshot at a past time
// matches FFmpeg's frame of the recording at that time.
func TestSnapshots(t *testing.T) {
	a, cam := recorderApp(t)

	// Now, over NATS.
	testenv.WaitFor(t, 20*time.Second, "a keyframe", func() bool {
		_, c := a.thumbs.svc.Stats(), a.thumbs.svc.Recording(cam)
		return c && a.thumbs.svc.Stats().Minute > 0
	})
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	data, err := a.Bus().RequestSnapshot(ctx, cam)
	cancel()
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	var r thumbs.SnapshotReply
	if err := json.Unmarshal(data, &r); err != nil || r.Error != "" {
		t.Fatalf("reply %s: %v", data, err)
	}
	t.Logf("snapshot request answered in %s: %s", took, data)
	if r.Key != storage.SnapshotKey(cam, time.UnixMilli(r.TsMs)) || r.Width != 1280 || r.Height != 720 {
		t.Fatalf("reply %+v", r)
	}
	if w, h := checkJPEG(t, a.store, r.Key); w != 1280 || h != 720 {
		t.Fatalf("snapshot is %dx%d", w, h)
	}
	// A camera recorded nowhere gets no answer.
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	if _, err := a.Bus().RequestSnapshot(ctx, "nobody"); err == nil {
		t.Fatal("a snapshot of a camera recorded nowhere was answered")
	}
	cancel()

	// At a past time, from the recordings.
	var segKey string
	testenv.WaitFor(t, 30*time.Second, "a stored segment", func() bool {
		keys := listKeys(t, a.store, storage.CameraSegmentsPrefix(cam))
		if len(keys) > 0 {
			segKey = keys[0]
		}
		return segKey != ""
	})
	_, startMs, durMs, initSize, err := storage.ParseSegmentKey(segKey)
	if err != nil {
		t.Fatal(err)
	}
	body := getObject(t, a.store, segKey)
	// The key carries the init size: the ftyp and moov boxes, as the
	// init-size metadata says.
	if n := initBoxes(body); initSize <= 0 || initSize != n {
		t.Fatalf("segment %s: init size %d in the key, ftyp+moov are %d bytes", segKey, initSize, n)
	}
	if obj, err := a.store.Stat(context.Background(), segKey); err != nil || obj.Metadata["init-size"] != strconv.FormatInt(initSize, 10) {
		t.Fatalf("segment %s: init-size metadata %q (%v), key says %d", segKey, obj.Metadata["init-size"], err, initSize)
	}
	mp4 := filepath.Join(t.TempDir(), "seg.mp4")
	if err := os.WriteFile(mp4, body, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.UnixMilli(startMs)
	for _, n := range []int{0, 17, 40} { // keyframe, mid-GOP, second GOP
		if int64(n)*1000/15 >= durMs {
			t.Fatalf("segment %s too short for frame %d", segKey, n)
		}
		ts := start.Add(time.Duration(n)*time.Second/15 + 20*time.Millisecond)
		key, frame, err := a.SnapshotAt(context.Background(), cam, ts)
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		if want := start.Add(time.Duration(n) * time.Second / 15); frame.Sub(want).Abs() > time.Millisecond {
			t.Fatalf("frame %d: frame time %s, want %s", n, frame, want)
		}
		jpg := getObject(t, a.store, key)
		p := lumaPSNR(t, jpg, mp4, n)
		other := lumaPSNR(t, jpg, mp4, n+5)
		t.Logf("snapshot at frame %d: luma PSNR %.1f dB against FFmpeg's frame %d, %.1f dB against frame %d", n, p, n, other, n+5)
		if p <= 30 || p <= other {
			t.Fatalf("frame %d: PSNR %.1f dB (frame %d: %.1f dB), want > 30 dB and above the other frame's", n, p, n+5, other)
		}
	}
	if _, _, err := a.SnapshotAt(context.Background(), cam, start.Add(-time.Hour)); err == nil {
		t.Fatal("snapshot an hour before the first recording succeeded")
	}
}

// initBoxes returns the byte size of the leading ftyp and moov boxes of an
// fMP4 file, 0 when it does not start with them.
func initBoxes(b []byte) int64 {
	var n int64
	for _, want := range []string{"ftyp", "moov"} {
		if int64(len(b)) < n+8 || string(b[n+4:n+8]) != want {
			return 0
		}
		n += int64(binary.BigEndian.Uint32(b[n : n+4]))
	}
	return n
}
