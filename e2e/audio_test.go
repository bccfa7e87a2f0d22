package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// Cameras with sound on whose audio is G.711 or Opus are recorded with
// AAC audio (audio/transcode): every segment has an AAC track that
// FFmpeg decodes without a word, spanning the video, and a browser plays
// it with sound.

// audioStream is what ffprobe says of one stream of a segment.
type audioStream struct {
	CodecType  string `json:"codec_type"`
	CodecName  string `json:"codec_name"`
	SampleRate string `json:"sample_rate"`
	Channels   int    `json:"channels"`
	Start      string `json:"start_time"`
	Duration   string `json:"duration"`
	Index      int    `json:"index"`
	TimeBase   string `json:"time_base"`
}

func (s audioStream) span() (start, end float64) {
	start, _ = strconv.ParseFloat(s.Start, 64)
	d, _ := strconv.ParseFloat(s.Duration, 64)
	return start, start + d
}

// auditAudio checks one stored segment: FFmpeg decodes it without a word;
// it has an AAC track, mono at rate, that starts and ends within one AAC
// frame (and a packet) of the video, with no AAC frame missing in between.
func auditAudio(t *testing.T, st storage.Store, key string, rate int) {
	t.Helper()
	path := download(t, st, key)
	name := filepath.Base(key)
	if out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("%s: ffmpeg decoding says %v: %s", name, err, firstLines(string(out), 5))
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries",
		"stream=index,codec_type,codec_name,sample_rate,channels,start_time,duration,time_base",
		"-show_entries", "packet=stream_index,pts", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", name, err)
	}
	var raw struct {
		Streams []audioStream   `json:"streams"`
		Packets []ffprobePacket `json:"packets"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	var video, audio *audioStream
	for i, s := range raw.Streams {
		switch s.CodecType {
		case "video":
			video = &raw.Streams[i]
		case "audio":
			audio = &raw.Streams[i]
		}
	}
	if video == nil || audio == nil {
		t.Errorf("%s: streams %+v, want video and audio", name, raw.Streams)
		return
	}
	if audio.CodecName != "aac" || audio.SampleRate != strconv.Itoa(rate) || audio.Channels != 1 {
		t.Errorf("%s: audio %s at %s Hz, %d channels; want aac at %d Hz, mono", name, audio.CodecName, audio.SampleRate, audio.Channels, rate)
	}
	frame := 1024 / float64(rate)
	slack := frame + 0.03
	vs, ve := video.span()
	as, ae := audio.span()
	if as > vs+slack || ae < ve-slack {
		t.Errorf("%s: audio from %.3f to %.3f s, video from %.3f to %.3f s: audio does not span the video", name, as, ae, vs, ve)
	}
	if gap := maxGap(raw.Packets, audio.Index, audio.TimeBase); gap.Seconds() > frame*1.5 {
		t.Errorf("%s: %v between two AAC frames (one lasts %.0f ms)", name, gap, frame*1000)
	}
}

// audioMetric reads one of the audio metrics of a node.
func audioMetric(t *testing.T, url, name string) float64 {
	t.Helper()
	return scrapeMetrics(t, url+"/metrics")[name]
}

// TestAudioTranscodedSynth records synthetic cameras with G.711 µ-law,
// A-law and Opus audio, sound on, over TCP: every segment has AAC audio
// (8 kHz for G.711, 16 kHz for Opus). A G.711 camera with sound off is
// recorded without audio, and nothing is transcoded for it.
func TestAudioTranscodedSynth(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cams := startSynth(t,
		synth.CameraSpec{Path: "pcmu", AudioCodec: synth.AudioPCMU},
		synth.CameraSpec{Path: "pcma", AudioCodec: synth.AudioPCMA},
		synth.CameraSpec{Path: "opus", AudioCodec: synth.AudioOpus},
	)
	log, _ := testLogger(t)

	// Sound off, alone on its node: no audio, nothing transcoded.
	qc := s3Config(t, m)
	quiet := startApp(t, qc, log)
	if err := quiet.RecordCamera(ingest.Camera{ID: "pcmu-off", URL: cams.URL("pcmu"), Sound: false, Trusted: true}); err != nil {
		t.Fatal(err)
	}
	qst := openS3(t, qc)
	segs := waitSegments(t, qst, "pcmu-off", 2, 60*time.Second)
	if p := ffprobe(t, download(t, qst, segs[1].Key)); p.Audio != "" || p.Video.Codec != "h264" {
		t.Errorf("sound off: segment %+v, want video alone", p)
	}
	if v := audioMetric(t, quiet.URL(), "vigia_audio_transcoded_seconds_total"); v != 0 {
		t.Errorf("sound off: %v s of audio transcoded", v)
	}

	c := s3Config(t, m)
	st := openS3(t, c)
	a := startApp(t, c, log)
	want := map[string]int{"pcmu": 8000, "pcma": 8000, "opus": 16000}
	for id := range want {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cams.URL(id), Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	for id, rate := range want {
		t.Run(id, func(t *testing.T) {
			segs := waitSegments(t, st, id, 3, 60*time.Second)
			for _, s := range segs[:3] {
				auditAudio(t, st, s.Key, rate)
			}
		})
	}
	if v := audioMetric(t, a.URL(), "vigia_audio_transcoded_seconds_total"); v < 3*4 {
		t.Errorf("%v s of audio transcoded for three cameras recording over 6 s", v)
	}
	if v := audioMetric(t, a.URL(), "vigia_audio_transcode_cpu_seconds_total"); v <= 0 {
		t.Errorf("transcoding CPU %v s", v)
	}
}

// TestAudioGStreamer records G.711 (µ-law, A-law) and Opus cameras served
// by GStreamer's RTSP server (mulawenc ! rtppcmupay, alawenc ! rtppcmapay,
// opusenc ! rtpopuspay), over TCP and UDP.
func TestAudioGStreamer(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	base := gstRTSPServer(t)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	type camera struct {
		id, path, transport string
		rate                int
	}
	var cams []camera
	for _, tr := range []string{"tcp", "udp"} {
		cams = append(cams,
			camera{"gst-pcmu-" + tr, "h264-pcmu", tr, 8000},
			camera{"gst-pcma-" + tr, "h264-pcma", tr, 8000},
			camera{"gst-opus-" + tr, "h264-opus", tr, 16000},
		)
	}
	for _, cam := range cams {
		if err := a.RecordCamera(ingest.Camera{ID: cam.id, URL: base + "/" + cam.path, Transport: cam.transport, Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	for _, cam := range cams {
		t.Run(strings.TrimPrefix(cam.id, "gst-"), func(t *testing.T) {
			segs := waitSegments(t, st, cam.id, 3, 60*time.Second)
			for _, s := range segs[:3] {
				auditAudio(t, st, s.Key, cam.rate)
			}
		})
	}
}

// TestAudioFFmpeg records what FFmpeg publishes: H.264 with G.711 µ-law and
// with Opus into MediaMTX over RTSP, and H.264 with G.711 A-law in FLV
// pushed to the node over RTMP; all come out with AAC audio. A stream with
// G.726 audio is recorded without sound, which the log says once.
func TestAudioFFmpeg(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"ffmpeg", "ffprobe", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: run make deps", tool)
		}
	}
	mtx := startMediaMTX(t)
	m := testenv.SharedMinIO(t)
	const seconds = 40
	h264 := []string{"-c:v", "libx264", "-preset", "ultrafast", "-bf", "0"}
	pcmu := interopClip(t, "pcmu", seconds, h264, []string{"-c:a", "pcm_mulaw", "-ar", "8000", "-ac", "1"})
	opus := interopClip(t, "opus", seconds, h264, []string{"-c:a", "libopus", "-b:a", "32k", "-ac", "1"})
	pcma := interopClip(t, "pcma", seconds, h264, []string{"-c:a", "pcm_alaw", "-ar", "8000", "-ac", "1"})
	g726 := interopClip(t, "g726", seconds, h264, []string{"-c:a", "g726", "-ar", "8000", "-ac", "1", "-b:a", "32k"})
	publish(t, pcmu, mtx.rtsp+"/pcmu", "-f", "rtsp", "-rtsp_transport", "tcp")
	publish(t, opus, mtx.rtsp+"/opus", "-f", "rtsp", "-rtsp_transport", "tcp")
	publish(t, g726, mtx.rtsp+"/g726", "-f", "rtsp", "-rtsp_transport", "tcp")

	c := s3Config(t, m)
	c.RTMP.Addr = "127.0.0.1:0"
	c.Recording.SegmentDuration = config.Duration(4 * time.Second)
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	for _, path := range []string{"pcmu", "opus", "g726"} {
		testenv.WaitFor(t, 20*time.Second, "ffmpeg publishing "+path, func() bool {
			return strings.Contains(mtx.log.String(), "is publishing to path '"+path+"'")
		})
		if err := a.RecordCamera(ingest.Camera{ID: "mtx-" + path, URL: mtx.rtsp + "/" + path, Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.RecordCamera(ingest.Camera{ID: "push-pcma", URL: "rtmp-push:", Sound: true}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the push server listening", func() bool { return a.RTMPServer().Addr() != "" })
	publish(t, pcma, a.PushURL("push-pcma"), "-f", "flv")

	st := openS3(t, c)
	for cam, rate := range map[string]int{"mtx-pcmu": 8000, "mtx-opus": 16000, "push-pcma": 8000} {
		t.Run(cam, func(t *testing.T) {
			segs := waitSegments(t, st, cam, 3, 60*time.Second)
			for _, s := range segs[:3] {
				auditAudio(t, st, s.Key, rate)
			}
		})
	}
	t.Run("g726", func(t *testing.T) {
		segs := waitSegments(t, st, "mtx-g726", 2, 60*time.Second)
		if p := ffprobe(t, download(t, st, segs[1].Key)); p.Audio != "" || p.Video.Codec != "h264" {
			t.Errorf("segment %+v, want video alone", p)
		}
		if n := strings.Count(logs.String(), "camera audio not recorded"); n != 1 || !strings.Contains(logs.String(), `"codec":"G726"`) {
			t.Errorf("%d log lines say the G.726 audio is not recorded, want 1 naming G726", n)
		}
		if v := audioMetric(t, a.URL(), `vigia_audio_unrecorded_tracks_total{codec="other"}`); v < 1 {
			t.Errorf("unrecorded audio tracks counted %v, want at least 1", v)
		}
	})
}

// TestAudioPlaysInChromium: a recorded segment of a G.711 camera plays in
// headless Chromium with its audio decoded, and so does the camera's live
// stream in the player page (hls.js), whose Sound button, shown once
// there is sound, turns it on and off.
func TestAudioPlaysInChromium(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", AudioCodec: synth.AudioPCMU})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Sound: true, Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	segs := waitSegments(t, st, "cam", 2, 60*time.Second)
	segment := download(t, st, segs[1].Key)

	liveURL := a.LiveURL("cam", time.Now().Add(time.Hour))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /segment.mp4", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeFile(w, r, segment)
	})
	mux.HandleFunc("GET /segment", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><video id="video" src="/segment.mp4" muted autoplay playsinline></video>`)
	})
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player", func(w http.ResponseWriter, r *http.Request) {
		q, err := player.ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		player.Page(w, r, player.Params{CameraID: "cam", CameraName: "cam", LiveURL: liveURL, VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/", Query: q})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := headless.Chromium(t)
	for _, page := range []string{"/segment", "/player?ts=0"} {
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+page)); err != nil {
			t.Fatal(err)
		}
		var state struct {
			Time  float64 `json:"time"`
			Audio float64 `json:"audio"`
			Error string  `json:"error"`
		}
		read := func() {
			err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const v = document.getElementById('video');
				return {time: v.currentTime, audio: v.webkitAudioDecodedByteCount || 0, error: v.error ? v.error.message || String(v.error.code) : ''}; })()`, &state))
			if err != nil {
				t.Fatalf("%s: read the video element: %v", page, err)
			}
		}
		testenv.WaitFor(t, 30*time.Second, page+" playing 1 s with audio decoded", func() bool {
			read()
			if state.Error != "" {
				t.Fatalf("%s: media error %s", page, state.Error)
			}
			return state.Time >= 1 && state.Audio > 0
		})
		t.Logf("%s: %.1f s played, %.0f bytes of audio decoded", page, state.Time, state.Audio)
	}
	// The player starts muted and shows its Sound button once the stream
	// has sound; a click (a real mouse event, the gesture browsers ask
	// for) turns the sound on, another off.
	sound := func() (s struct {
		Hidden bool   `json:"hidden"`
		Muted  bool   `json:"muted"`
		State  string `json:"state"`
	}) {
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({hidden: document.getElementById('sound').hidden,
			muted: document.getElementById('video').muted, state: document.body.dataset.sound || ''})`, &s)); err != nil {
			t.Fatalf("read the sound button: %v", err)
		}
		return s
	}
	testenv.WaitFor(t, 10*time.Second, "the Sound button shown", func() bool { s := sound(); return !s.Hidden && s.Muted && s.State == "off" })
	for _, want := range []string{"on", "off"} {
		if err := chromedp.Run(b.Ctx, chromedp.Click("#sound", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 5*time.Second, "sound "+want, func() bool { s := sound(); return s.State == want && s.Muted == (want == "off") })
	}
}
