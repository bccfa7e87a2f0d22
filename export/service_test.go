package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/testenv"
)

func openBus(t *testing.T, url string) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := bus.Options{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}
	if url != "" {
		opts = bus.Options{URL: url}
	}
	b, err := bus.Open(ctx, opts, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func startService(t *testing.T, cfg ServiceConfig) *Service {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func waitState(t *testing.T, j *Jobs, id int64, what string, cond func(State) bool) State {
	t.Helper()
	var st State
	testenv.WaitForNil(t, 60*time.Second, what, func() error {
		var err error
		if st, err = j.Get(context.Background(), id); err == nil && !cond(st) {
			err = fmt.Errorf("state %+v", st)
		}
		return err
	})
	return st
}

// ffmpegThumbnail decodes the keyframe with FFmpeg (tests only; production
// uses the thumbs package's decoder).
func ffmpegThumbnail(ctx context.Context, kf *Keyframe) ([]byte, error) {
	dir, err := os.MkdirTemp("", "kf")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var es []byte
	for _, n := range append([][]byte{kf.VPS, kf.SPS, kf.PPS}, kf.NALUs...) {
		if len(n) > 0 {
			es = append(append(es, 0, 0, 0, 1), n...)
		}
	}
	in, out := filepath.Join(dir, "kf.es"), filepath.Join(dir, "kf.jpg")
	if err := os.WriteFile(in, es, 0o600); err != nil {
		return nil, err
	}
	format := map[string]string{"H264": "h264", "H265": "hevc"}[string(kf.Codec)]
	if b, err := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-f", format, "-i", in, "-frames:v", "1", "-y", out).CombinedOutput(); err != nil {
		return nil, errors.New(string(b))
	}
	return os.ReadFile(out)
}

func TestJobLifecycle(t *testing.T) {
	st, err := fs.New(t.TempDir(), fs.Options{BaseURL: "http://127.0.0.1:1/media", Secret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	record(t, st, "7", "h264", true, 20*time.Second, recRun{t0, 60 * time.Second})
	b := openBus(t, "")
	s := startService(t, ServiceConfig{Bus: b, Store: st, Node: "a", Thumbnail: ffmpegThumbnail})
	j := s.Jobs()
	ctx := context.Background()

	sub, err := j.Submit(ctx, Job{ID: 41, Camera: "7", StartMs: t0.Add(10 * time.Second).UnixMilli(), EndMs: t0.Add(50 * time.Second).UnixMilli(), Description: "door"})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Status != StatusMaking || sub.Key != "videos/41.mp4" {
		t.Errorf("submitted state %+v", sub)
	}
	if _, err := j.Submit(ctx, Job{ID: 41, Camera: "7", StartMs: 1, EndMs: 2}); !errors.Is(err, ErrJobExists) {
		t.Errorf("second submit of id 41: %v, want ErrJobExists", err)
	}
	if _, err := j.Submit(ctx, Job{ID: 42, Camera: "7", StartMs: 0, EndMs: (25 * time.Hour).Milliseconds()}); !errors.Is(err, ErrRange) {
		t.Errorf("25 h job: %v, want ErrRange", err)
	}
	done := waitState(t, j, 41, "job 41 done", func(s State) bool { return s.Status != StatusMaking })
	if done.Status != StatusDone || done.Progress != 100 || done.Node != "a" || done.Size == 0 || done.ThumbKey != "videos/41.jpg" {
		t.Fatalf("done state %+v", done)
	}
	if d := time.Duration(done.DurationMs) * time.Millisecond; d < 40*time.Second || d > 42*time.Second {
		t.Errorf("duration %v, want 40 s within one GOP", d)
	}
	thumb, err := st.Stat(ctx, done.ThumbKey)
	if err != nil || thumb.Size == 0 {
		t.Errorf("thumbnail %+v %v", thumb, err)
	}
	video, thumbURL, err := j.URLs(ctx, 41, time.Hour)
	if err != nil || !strings.Contains(video, "/media/videos/41.mp4?") || !strings.Contains(thumbURL, "/media/videos/41.jpg?") {
		t.Errorf("urls %q %q %v", video, thumbURL, err)
	}

	// A job whose range has no recordings fails with a clear reason.
	if _, err := j.Submit(ctx, Job{ID: 43, Camera: "7", StartMs: t0.Add(2 * time.Hour).UnixMilli(), EndMs: t0.Add(3 * time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	failed := waitState(t, j, 43, "job 43 failed", func(s State) bool { return s.Status != StatusMaking })
	if failed.Status != StatusFailed || !strings.Contains(failed.Reason, "no recordings") {
		t.Errorf("failed state %+v", failed)
	}

	// Removal deletes the file and the record.
	if err := j.Remove(ctx, 41); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Get(ctx, 41); !errors.Is(err, ErrJobNotFound) {
		t.Errorf("get after remove: %v", err)
	}
	for _, k := range []string{"videos/41.mp4", "videos/41.jpg"} {
		if _, err := st.Stat(ctx, k); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s after remove: %v", k, err)
		}
	}
	all, err := j.List(ctx)
	if err != nil || len(all) != 1 || all[0].ID != 43 {
		t.Errorf("list %+v %v", all, err)
	}
	// A maximum age removes finished jobs.
	if n, err := j.Expire(ctx, time.Hour, time.Now().Add(2*time.Hour)); err != nil || n != 1 {
		t.Errorf("expire: %d %v", n, err)
	}
}

// gatedStore blocks every Get after the first until its context ends: a
// node stuck mid-job.
type gatedStore struct {
	storage.Store
	gets atomic.Int32
}

func (g *gatedStore) Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if g.gets.Add(1) > 1 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return g.Store.Get(ctx, key, off, n)
}

// TestJobSurvivesKilledNode kills the node running a job (its NATS
// connection goes away without an acknowledgement) and checks that another
// node finishes it.
func TestJobSurvivesKilledNode(t *testing.T) {
	st := newFS(t)
	record(t, st, "7", "h264", false, 10*time.Second, recRun{t0, 40 * time.Second})
	server := openBus(t, "")
	busA := openBus(t, server.ClientURL())
	busB := openBus(t, server.ClientURL())
	const ackWait = 2 * time.Second
	a := startService(t, ServiceConfig{Bus: busA, Store: &gatedStore{Store: st}, Node: "a", AckWait: ackWait, MaxConcurrent: 1})
	j := NewJobs(server, st, 0)
	ctx := context.Background()
	if _, err := j.Submit(ctx, Job{ID: 7, Camera: "7", StartMs: t0.UnixMilli(), EndMs: t0.Add(35 * time.Second).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	mid := waitState(t, j, 7, "node a mid-job", func(s State) bool { return s.Node == "a" && s.Progress > 0 })
	if mid.Status != StatusMaking || mid.Progress >= 100 {
		t.Fatalf("mid-job state %+v", mid)
	}
	// Kill node a: its connection dies first, so nothing is acknowledged
	// or handed back.
	busA.Close()
	a.Close()

	startService(t, ServiceConfig{Bus: busB, Store: st, Node: "b", AckWait: ackWait, MaxConcurrent: 1})
	done := waitState(t, j, 7, "node b finishing the job", func(s State) bool { return s.Status != StatusMaking })
	if done.Status != StatusDone || done.Node != "b" {
		t.Fatalf("final state %+v", done)
	}
	if _, err := st.Stat(ctx, VideoKey(7)); err != nil {
		t.Fatal(err)
	}
}

// TestJobStateSeenLate: a job delivered before its state can be read (a
// server not caught up yet answered the read) is looked at again, not
// dropped: here the state is written 1.5 s after the job is queued, and
// the job is made.
func TestJobStateSeenLate(t *testing.T) {
	st, err := fs.New(t.TempDir(), fs.Options{BaseURL: "http://127.0.0.1:1/media", Secret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	record(t, st, "7", "h264", true, 20*time.Second, recRun{t0, 40 * time.Second})
	b := openBus(t, "")
	s := startService(t, ServiceConfig{Bus: b, Store: st, Node: "a"})
	ctx := context.Background()
	job := Job{ID: 43, Camera: "7", StartMs: t0.Add(5 * time.Second).UnixMilli(), EndMs: t0.Add(25 * time.Second).UnixMilli()}
	msg, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PublishExportJob(ctx, "export-"+stateKey(job.ID), msg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the state written late, on purpose
	now := time.Now().UTC()
	data, err := json.Marshal(State{Job: job, Status: StatusMaking, Key: VideoKey(job.ID), Created: now, Updated: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.KVCreate(ctx, bus.BucketExports, stateKey(job.ID), data); err != nil {
		t.Fatal(err)
	}
	if done := waitState(t, s.Jobs(), job.ID, "job 43 done", func(s State) bool { return s.Status != StatusMaking }); done.Status != StatusDone {
		t.Fatalf("state %+v, want done", done)
	}
}
