package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/p2p"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestP2P records P2P cameras through the synthetic gateway and its URL
// template: main and secondary streams are recorded, a wrong password
// gives ERRO PERMANENTE and never reaches a log line or a status message.
func TestP2P(t *testing.T) {
	t.Parallel()
	const pass, wrongPass = "p2p-Pass-7", "p2p-Wrong-9"
	g := synth.NewP2PGateway(synth.P2PGatewayConfig{Devices: []synth.P2PDevice{
		{Serial: "SN0001", Password: pass, Audio: true},
		{Serial: "SN0002", Password: pass, Codec: synth.CodecH265},
	}})
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	m := testenv.SharedMinIO(t)
	c := s3Config(t, m)
	c.P2P.Resolver = g.Template()
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	w := watchStatus(t, a.Bus(), "p2p-bad")
	st := openS3(t, c)
	for _, cam := range []ingest.Camera{
		{ID: "p2p-main", URL: p2p.URL("SN0001", pass, "0"), Sound: true},
		{ID: "p2p-sub", URL: p2p.URL("SN0002", pass, "1")},
		{ID: "p2p-bad", URL: p2p.URL("SN0001", wrongPass, "0")},
	} {
		if err := a.RecordCamera(cam); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]struct {
		codec, audio string
		w, h         int
	}{
		"p2p-main": {"h264", "aac", 1280, 720},
		"p2p-sub":  {"hevc", "", 640, 360},
	}
	for cam, wv := range want {
		segs := waitSegments(t, st, cam, 2, 60*time.Second)
		p := ffprobe(t, download(t, st, segs[1].Key))
		if p.Video.Codec != wv.codec || p.Audio != wv.audio || p.Video.Width != wv.w || p.Video.Height != wv.h || !p.Video.FirstKey {
			t.Errorf("camera %s: segment %+v, want %s %s %dx%d", cam, p, wv.codec, wv.audio, wv.w, wv.h)
		}
	}
	testenv.WaitFor(t, 20*time.Second, "wrong password: ERRO PERMANENTE", func() bool {
		s, _ := a.Recorder().Status("p2p-bad")
		return s.Code == status.Permanent
	})
	s, _ := a.Recorder().Status("p2p-bad")
	if !strings.Contains(s.LastError, ingest.ReasonAuth) {
		t.Errorf("last error %q, want %q", s.LastError, ingest.ReasonAuth)
	}
	if segs := segments(t, st, "p2p-bad"); len(segs) != 0 {
		t.Errorf("camera with a wrong password has %d segments", len(segs))
	}
	testenv.WaitFor(t, 5*time.Second, "status message", func() bool {
		tr := w.transitions()
		return len(tr) > 0 && tr[len(tr)-1] == status.Permanent
	})
	w.mu.Lock()
	all := strings.Join(w.msgs, "\n")
	w.mu.Unlock()
	for where, text := range map[string]string{"logs": logs.String(), "status messages": all} {
		for _, p := range []string{pass, wrongPass} {
			if strings.Contains(text, p) {
				t.Errorf("a p2p password appears in %s", where)
			}
		}
	}
}
