package rtmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// testKeys returns the keys of testSecret.
func testKeys(t testing.TB) *sign.Keys {
	t.Helper()
	k, err := sign.New(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type refusals struct {
	mu      sync.Mutex
	reasons []string
}

func (r *refusals) add(s string) {
	r.mu.Lock()
	r.reasons = append(r.reasons, s)
	r.mu.Unlock()
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reasons...)
}

func startServer(t *testing.T, log *zap.Logger) (*Server, *refusals, *refusals) {
	t.Helper()
	ref, errs := &refusals{}, &refusals{}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Keys: testKeys(t), ReadTimeout: 3 * time.Second,
		Hold: 2 * time.Second, OnRefused: ref.add, OnError: errs.add, Log: log})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, ref, errs
}

func pushURL(s *Server, camera string) string {
	port := s.ln.Addr().(interface{ String() string }).String()
	_, p, _ := strings.Cut(port, ":")
	var n int
	fmt.Sscan(p, &n)
	return PushURL("127.0.0.1", n, testSecret, camera)
}

// checkVideo checks the video units: first a keyframe with parameter sets,
// DTS increasing.
func checkVideo(t *testing.T, c *collector, codec media.Codec) {
	t.Helper()
	tr := c.lastTracks()
	if tr == nil || tr[0].Codec != codec {
		t.Fatalf("tracks %v, want %s video first", tr, codec)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var last time.Duration = -1
	first := true
	for _, u := range c.units {
		if u.Track != 0 {
			continue
		}
		if first {
			if !u.Key {
				t.Errorf("first video unit is not a keyframe")
			}
			if len(u.NALUs) < 3 {
				t.Errorf("first keyframe has %d NAL units, want parameter sets in front", len(u.NALUs))
			}
			first = false
		}
		if u.DTS <= last {
			t.Errorf("DTS %v after %v", u.DTS, last)
		}
		last = u.DTS
	}
}

func TestPushSynthCodecs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec synth.RTMPStreamSpec
		want media.Codec
	}{
		{"h264 aac legacy", synth.RTMPStreamSpec{Codec: synth.CodecH264, Audio: true}, media.H264},
		{"h265 legacy id 12", synth.RTMPStreamSpec{Codec: synth.CodecH265}, media.H265},
		{"h265 enhanced hvc1", synth.RTMPStreamSpec{Codec: synth.CodecH265, Enhanced: true, Audio: true}, media.H265},
		{"h264 enhanced avc1", synth.RTMPStreamSpec{Codec: synth.CodecH264, Enhanced: true}, media.H264},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, _ := startServer(t, zap.NewNop())
			col := &collector{}
			runPush(t, s, ingest.Camera{ID: "cam", Sound: true}, col)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = synth.PublishRTMP(ctx, pushURL(s, "cam"), tc.spec) }()
			testenv.WaitFor(t, 15*time.Second, "45 video units", func() bool { v, _ := col.counts(); return v >= 45 })
			checkVideo(t, col, tc.want)
			clip, _ := synth.Fixture(tc.spec.Codec, false)
			if tr := col.lastTracks(); !bytes.Equal(tr[0].SPS, clip.SPS) {
				t.Errorf("track SPS differs from the clip's")
			}
			_, a := col.counts()
			if tc.spec.Audio && (a == 0 || len(col.lastTracks()) != 2 || col.lastTracks()[1].Codec != media.AAC) {
				t.Errorf("%d audio units, tracks %d, want AAC", a, len(col.lastTracks()))
			}
			if !tc.spec.Audio && a != 0 {
				t.Errorf("%d audio units without audio", a)
			}
		})
	}
}

func TestPushSoundOff(t *testing.T) {
	t.Parallel()
	s, _, _ := startServer(t, zap.NewNop())
	col := &collector{}
	runPush(t, s, ingest.Camera{ID: "mute", Sound: false}, col)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = synth.PublishRTMP(ctx, pushURL(s, "mute"), synth.RTMPStreamSpec{Audio: true}) }()
	testenv.WaitFor(t, 15*time.Second, "30 video units", func() bool { v, _ := col.counts(); return v >= 30 })
	if _, a := col.counts(); a != 0 || len(col.lastTracks()) != 1 {
		t.Errorf("sound off: %d audio units, %d tracks; want video only", a, len(col.lastTracks()))
	}
}

func TestPushWrongKeyRefused(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	s, ref, _ := startServer(t, zap.New(core))
	col := &collector{}
	runPush(t, s, ingest.Camera{ID: "cam1", Sound: true}, col)
	other := PushKey(testSecret, "cam2")
	bad := strings.Replace(pushURL(s, "cam1"), "key="+PushKey(testSecret, "cam1"), "key="+other, 1)
	noKey, _, _ := strings.Cut(bad, "?")
	for _, u := range []string{bad, noKey} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := synth.PublishRTMP(ctx, u, synth.RTMPStreamSpec{})
		cancel()
		if !errors.Is(err, synth.ErrRTMPRefused) {
			t.Errorf("publish with a wrong key: %v, want refused", err)
		}
	}
	if got := ref.list(); len(got) != 2 || got[0] != RefusedBadKey || got[1] != RefusedBadKey {
		t.Errorf("refusals %v, want two %s", got, RefusedBadKey)
	}
	if v, a := col.counts(); v+a != 0 {
		t.Errorf("%d units from a refused publisher", v+a)
	}
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), other) {
			t.Errorf("the stream key appears in the log: %v", e.ContextMap())
		}
	}
	if logs.FilterMessage("rtmp publisher refused").Len() != 2 {
		t.Errorf("refusals not logged")
	}
}

func TestPushSecondPublisherReplaces(t *testing.T) {
	t.Parallel()
	s, _, _ := startServer(t, zap.NewNop())
	col := &collector{}
	runPush(t, s, ingest.Camera{ID: "cam"}, col)
	first := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { first <- synth.PublishRTMP(ctx, pushURL(s, "cam"), synth.RTMPStreamSpec{}) }()
	testenv.WaitFor(t, 15*time.Second, "first publisher's video", func() bool { v, _ := col.counts(); return v >= 10 })
	go func() { _ = synth.PublishRTMP(ctx, pushURL(s, "cam"), synth.RTMPStreamSpec{Codec: synth.CodecH265}) }()
	select {
	case err := <-first:
		if err == nil {
			t.Errorf("first publisher ended without error")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("first publisher not replaced")
	}
	testenv.WaitFor(t, 15*time.Second, "second publisher's H.265", func() bool {
		tr := col.lastTracks()
		return tr != nil && tr[0].Codec == media.H265
	})
}

func TestPushNotRecordedHere(t *testing.T) {
	t.Parallel()
	s, ref, _ := startServer(t, zap.NewNop())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := synth.PublishRTMP(ctx, pushURL(s, "elsewhere"), synth.RTMPStreamSpec{})
	if !errors.Is(err, synth.ErrRTMPRefused) {
		t.Errorf("publish for a camera not recorded here: %v, want refused", err)
	}
	if got := ref.list(); len(got) != 1 || got[0] != RefusedNotRecorded {
		t.Errorf("refusals %v", got)
	}
}

// fixtureMP4 builds an MP4 (H.264 720p + AAC) from the synth fixtures.
func fixtureMP4(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "clip.mp4")
	fx := filepath.Join("..", "..", "synth", "fixtures")
	cmd := exec.Command("ffmpeg", "-v", "error", "-f", "h264", "-r", "15", "-i", filepath.Join(fx, "h264_720p.h264"),
		"-i", filepath.Join(fx, "aac_16k_mono.aac"), "-c", "copy", "-shortest", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	return out
}

func TestPushFFmpeg(t *testing.T) {
	t.Parallel()
	s, _, _ := startServer(t, zap.NewNop())
	col := &collector{}
	runPush(t, s, ingest.Camera{ID: "ff", Sound: true}, col)
	clip := fixtureMP4(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "flv", pushURL(s, "ff"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	testenv.WaitFor(t, 20*time.Second, "45 video and 40 audio units", func() bool { v, a := col.counts(); return v >= 45 && a >= 40 })
	checkVideo(t, col, media.H264)
	if tr := col.lastTracks(); len(tr) != 2 || tr[1].AAC == nil || tr[1].AAC.SampleRate != 16000 {
		t.Errorf("tracks %v, want H.264 and AAC 16 kHz", tr)
	}
}
