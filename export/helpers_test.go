package export

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/synth"
)

// recRun is one uninterrupted run of a camera.
type recRun struct {
	start time.Time
	dur   time.Duration
}

// record writes the camera's segments for runs into st through the real
// segmenter (Writer, Spool, upload), fed with the synthetic fixture's units
// at synthetic times, as fast as the CPU allows.
func record(t testing.TB, st storage.Store, cam, codec string, audio bool, segDur time.Duration, runs ...recRun) {
	t.Helper()
	recordFixture(t, st, cam, codec, true, audio, segDur, runs...)
}

// recordBig records 10 minutes of the 720p fixture with audio in 60 s segments.
func recordBig(t testing.TB, st storage.Store, codec string) {
	t.Helper()
	recordFixture(t, st, "7", codec, false, true, time.Minute, recRun{t0, 10 * time.Minute})
}

func recordFixture(t testing.TB, st storage.Store, cam, codec string, small, audio bool, segDur time.Duration, runs ...recRun) {
	t.Helper()
	clip, err := synth.Fixture(codec, small)
	if err != nil {
		t.Fatal(err)
	}
	aclip, err := synth.AudioFixture()
	if err != nil {
		t.Fatal(err)
	}
	sp, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir: t.TempDir(),
		Upload: func(ctx context.Context, seg segmenter.Segment, body io.ReadSeeker) error {
			return st.Put(ctx, storage.SegmentKey(seg.Camera, seg.Start, seg.Duration, seg.InitSize), body, seg.Size, storage.PutOptions{})
		},
		RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		Log: zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	w := segmenter.NewWriter(segmenter.WriterConfig{Camera: cam, SegmentDuration: segDur, Spool: sp, Log: zap.NewNop()})
	vt := clip.Track()
	tracks := []*media.Track{&vt}
	if audio {
		at := aclip.Track()
		tracks = append(tracks, &at)
	}
	frame := time.Duration(float64(time.Second) / clip.FPS)
	aframe := time.Duration(1024 * int64(time.Second) / int64(aclip.SampleRate()))
	for _, run := range runs {
		if err := w.SetTracks(tracks); err != nil {
			t.Fatal(err)
		}
		vi, ai := 0, 0
		for {
			vd := time.Duration(vi) * frame
			ad := time.Duration(ai) * aframe
			if vd >= run.dur && (!audio || ad >= run.dur) {
				break
			}
			if !audio || vd <= ad {
				if vd < run.dur {
					u := clip.Units[vi%len(clip.Units)]
					u.DTS, u.PTS, u.Time, u.Track = vd, vd, run.start.Add(vd), 0
					if err := w.WriteUnit(&u); err != nil {
						t.Fatal(err)
					}
				}
				vi++
				continue
			}
			u := aclip.Units[ai%len(aclip.Units)]
			u.DTS, u.PTS, u.Time, u.Track = ad, ad, run.start.Add(ad), 1
			if err := w.WriteUnit(&u); err != nil {
				t.Fatal(err)
			}
			ai++
		}
		w.Discontinuity()
	}
	w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sp.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

func newFS(t testing.TB) storage.Store {
	t.Helper()
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// probe is what ffprobe says of a file.
type probe struct {
	Streams []struct {
		CodecName string `json:"codec_name"`
		CodecType string `json:"codec_type"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		NbFrames  string `json:"nb_read_packets"`
		Duration  string `json:"duration"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
	Frames []struct {
		KeyFrame int    `json:"key_frame"`
		PictType string `json:"pict_type"`
	} `json:"frames"`
}

func ffprobe(t *testing.T, path string, args ...string) probe {
	t.Helper()
	args = append(append([]string{"-v", "error"}, args...), "-of", "json", path)
	out, err := exec.Command("ffprobe", args...).Output()
	if err != nil {
		t.Fatalf("ffprobe %v: %v", args, err)
	}
	var p probe
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func seconds(t *testing.T, s string) time.Duration {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return time.Duration(f * float64(time.Second))
}

// topLevel returns the top-level box types of a file.
func topLevel(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for off := 0; off+8 <= len(b); {
		size := int(binary.BigEndian.Uint32(b[off:]))
		if size == 1 {
			size = int(binary.BigEndian.Uint64(b[off+8:]))
		}
		out = append(out, string(b[off+4:off+8]))
		if size < 8 {
			break
		}
		off += size
	}
	return out
}

func writeClip(t *testing.T, c *Clip) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clip.mp4")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}
