package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// frameInterval of the synthetic cameras (15 fps).
const frameInterval = time.Second / 15

// TestRecordsH264AndH265IntoMinIO records a synthetic H.264 camera (with
// AAC) and an H.265 camera into MinIO and checks every stored segment with
// ffprobe: codec, size, duration against the key, keyframe first, and no
// gaps between consecutive segments.
func TestRecordsH264AndH265IntoMinIO(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t,
		synth.CameraSpec{Path: "h264", Codec: "h264", Audio: true},
		synth.CameraSpec{Path: "h265", Codec: "h265"},
	)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, id := range []string{"h264", "h265"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cam.URL(id), Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	for _, tc := range []struct{ id, codec, audio string }{{"h264", "h264", "aac"}, {"h265", "hevc", ""}} {
		segs := waitSegments(t, st, tc.id, 4, 60*time.Second)
		auditRecording(t, st, segs, wantSegments{Codec: tc.codec, Width: 1280, Height: 720, Audio: tc.audio, FrameInterval: frameInterval})
		obj, err := st.Stat(context.Background(), segs[0].Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"codec", "width", "height", "init-size"} {
			if obj.Metadata[k] == "" {
				t.Errorf("%s: metadata %q missing (%v)", segs[0].Key, k, obj.Metadata)
			}
		}
	}
}

// TestRTPTimestampWraparound records a camera whose RTP timestamps wrap
// past 2^32 three seconds after it starts: no gap, no overlap.
func TestRTPTimestampWraparound(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "wrap", Codec: "h264", InitialRTPTime: math.MaxUint32 - 3*90000})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "wrap", URL: cam.URL("wrap"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	segs := waitSegments(t, openS3(t, c), "wrap", 4, 60*time.Second)
	auditContinuity(t, segs, frameInterval)
	for i, s := range segs {
		// The first segment of a start is staggered (docs/recording.md): it
		// ends at the first keyframe from half to one and a half segment
		// durations in, 2 or 4 s here.
		if i == 0 && s.DurMs >= 3900 && s.DurMs <= 4100 {
			continue
		}
		if s.DurMs < 1900 || s.DurMs > 2100 {
			t.Errorf("%s: duration %d ms, want 2000 (GOP 2 s)", s.Key, s.DurMs)
		}
	}
}

// statusWatcher collects the status codes published for a camera.
type statusWatcher struct {
	mu    sync.Mutex
	codes []status.Code
	msgs  []string
}

func watchStatus(t *testing.T, b *bus.Bus, cam string) *statusWatcher {
	w := &statusWatcher{}
	sub, err := b.Conn().Subscribe(bus.StatusSubject(cam), func(m *nats.Msg) {
		var s status.Status
		if err := json.Unmarshal(m.Data, &s); err != nil {
			t.Errorf("status payload: %v", err)
			return
		}
		w.mu.Lock()
		w.codes = append(w.codes, s.Code)
		w.msgs = append(w.msgs, string(m.Data))
		w.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

// transitions returns the codes with repeats folded.
func (w *statusWatcher) transitions() []status.Code {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []status.Code
	for _, c := range w.codes {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

// TestCameraOutage drops a camera for 20 s: one gap of about that length
// in storage, spanned by a closed gap record of camera_offline, and its
// status goes ONLINE → OFFLINE → ONLINE, each change
// published once.
func TestCameraOutage(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "flaky", Codec: "h264"})
	c := s3Config(t, m)
	c.Ingest.BackoffMax = 2000000000 // 2 s
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	w := watchStatus(t, a.Bus(), "flaky")
	if err := a.RecordCamera(ingest.Camera{ID: "flaky", URL: cam.URL("flaky"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	waitSegments(t, st, "flaky", 2, 60*time.Second)
	downAt := time.Now()
	if err := cam.SetDown("flaky", true); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 15*time.Second, "status OFFLINE", func() bool {
		s, _ := a.Recorder().Status("flaky")
		return s.Code == status.Offline
	})
	time.Sleep(20*time.Second - time.Since(downAt))
	upAt := time.Now()
	if err := cam.SetDown("flaky", false); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "status ONLINE again", func() bool {
		s, _ := a.Recorder().Status("flaky")
		return s.Code == status.Online
	})
	// Wait for two segments recorded after the outage.
	testenv.WaitFor(t, 60*time.Second, "segments after the outage", func() bool {
		n := 0
		for _, s := range segments(t, st, "flaky") {
			if s.StartMs > upAt.UnixMilli() {
				n++
			}
		}
		return n >= 2
	})
	segs := segments(t, st, "flaky")
	var gaps []int64
	for i := 1; i < len(segs); i++ {
		if g := segs[i].StartMs - segs[i-1].EndMs(); g > int64(frameInterval/time.Millisecond) {
			gaps = append(gaps, g)
		}
		if g := segs[i].StartMs - segs[i-1].EndMs(); g < -1 {
			t.Errorf("overlap of %d ms before %s", -g, segs[i].Key)
		}
	}
	// The gap: the outage, plus reconnection (backoff up to 2 s with
	// jitter, rate limiting) and waiting for the next keyframe (GOP 2 s);
	// minus at most the fragment in flight when the camera went away.
	outage := upAt.Sub(downAt).Milliseconds()
	if len(gaps) != 1 || gaps[0] < outage-1500 || gaps[0] > outage+8000 {
		t.Errorf("gaps %v ms, want one of about %d ms", gaps, outage)
	}
	// A closed record of camera_offline spans the hole (gaps_test.go).
	if hs := holes(segs); len(hs) == 1 {
		wantClosedGap(t, st, "flaky", status.CauseCameraOffline, hs[0])
	}
	// Let the last status messages arrive, then check the transitions.
	testenv.WaitFor(t, 5*time.Second, "status messages", func() bool {
		tr := w.transitions()
		return len(tr) > 0 && tr[len(tr)-1] == status.Online
	})
	tr := w.transitions()
	got := fmt.Sprint(tr)
	// A new camera starts OFFLINE, goes CONECTANDO, then ONLINE.
	if !strings.HasSuffix(got, "1 2 1]") {
		t.Errorf("status transitions %s, want ... 1 2 1", got)
	}
	w.mu.Lock()
	offline := 0
	for i, c := range w.codes {
		if c == status.Offline && i > 0 && w.codes[i-1] == status.Online {
			offline++
		}
	}
	w.mu.Unlock()
	if offline != 1 {
		t.Errorf("OFFLINE after ONLINE published %d times, want once", offline)
	}
}

// TestWrongPassword gives a camera a wrong password: status ERRO
// PERMANENTE, retried slowly, and the password never reaches a log line or
// a status message.
func TestWrongPassword(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	const secret = "s3cr3t-Wr0ng-pass"
	cam := startSynth(t, synth.CameraSpec{Path: "locked", Codec: "h264", User: "admin", Pass: "right-pass"})
	c := s3Config(t, m)
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	w := watchStatus(t, a.Bus(), "locked")
	url := strings.Replace(cam.URL("locked"), "rtsp://", "rtsp://admin:"+secret+"@", 1)
	if err := a.RecordCamera(ingest.Camera{ID: "locked", URL: url, Trusted: true}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "status ERRO PERMANENTE", func() bool {
		s, _ := a.Recorder().Status("locked")
		return s.Code == status.Permanent
	})
	s, _ := a.Recorder().Status("locked")
	if !strings.Contains(s.LastError, ingest.ReasonAuth) {
		t.Errorf("last error %q, want it to say %q", s.LastError, ingest.ReasonAuth)
	}
	// Slow retries: within a few seconds no second attempt is made.
	time.Sleep(3 * time.Second)
	if n := strings.Count(logs.String(), "camera failed permanently"); n != 1 {
		t.Errorf("%d permanent failures logged in 3 s, want 1 (retry after 5 min)", n)
	}
	testenv.WaitFor(t, 5*time.Second, "status message", func() bool { return len(w.transitions()) > 0 })
	w.mu.Lock()
	all := strings.Join(w.msgs, "\n")
	w.mu.Unlock()
	for where, text := range map[string]string{"logs": logs.String(), "status messages": all} {
		if strings.Contains(text, secret) {
			t.Errorf("the camera password appears in %s", where)
		}
	}
	if len(segments(t, openS3(t, c), "locked")) != 0 {
		t.Error("segments stored for a camera that never authenticated")
	}
}
