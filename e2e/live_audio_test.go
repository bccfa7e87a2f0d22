package e2e

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// keepPeerConnectionsJS, run before the page's own scripts, keeps every
// RTCPeerConnection the page makes in window.vigiaPCs, for getStats.
const keepPeerConnectionsJS = `(function () {
  var O = window.RTCPeerConnection;
  if (!O) { return; }
  window.vigiaPCs = [];
  function P(cfg) { var pc = new O(cfg); window.vigiaPCs.push(pc); return pc; }
  P.prototype = O.prototype;
  P.generateCertificate = O.generateCertificate;
  window.RTCPeerConnection = P;
})();`

// avSyncJS measures, in the playing page, the glass-to-glass latency of
// each picture shown (its stamp, as in TestLiveLatencyInChromium) and of
// each beep heard: an AudioWorklet on the video's stream finds where each
// beep starts, to the sample, and the context's output timestamp gives
// the wall-clock time it is played; the beep was made at the whole second
// before (synth.BeepHz, synth.BeepLength). It also measures each beep's
// length and pitch (zero crossings).
const avSyncJS = `
window.vigiaAV = {frames: [], beeps: [], sink: [], err: ''};
(function () {
  var v = document.getElementById('video'), cv = document.createElement('canvas');
  function f(now, md) {
    var s = vigiaReadStamp(v, cv);
    if (s !== null) {
      var at = performance.timeOrigin + md.expectedDisplayTime;
      vigiaAV.frames.push({at: at, lat: at - s});
    }
    v.requestVideoFrameCallback(f);
  }
  v.requestVideoFrameCallback(f);
  var proc = "registerProcessor('beeps', class extends AudioWorkletProcessor {" +
    "constructor() { super(); this.loud = false; this.quiet = 0; this.n = 0; this.zc = 0; this.prev = 0; this.onset = 0; }" +
    "process(inputs) {" +
    "  var ch = inputs[0] && inputs[0][0]; if (!ch) { return true; }" +
    "  for (var i = 0; i < ch.length; i++) {" +
    "    var x = ch[i], big = Math.abs(x) > 0.1;" +
    "    if (!this.loud) {" +
    "      if (big) { this.loud = true; this.onset = currentTime + i / sampleRate; this.n = 0; this.zc = 0; this.quiet = 0; }" +
    "    } else {" +
    "      this.n++; if ((x < 0) !== (this.prev < 0)) { this.zc++; }" +
    "      this.quiet = big ? 0 : this.quiet + 1;" +
    "      if (this.quiet > sampleRate / 200) {" +
    "        var len = (this.n - this.quiet) / sampleRate;" +
    "        this.port.postMessage({onset: this.onset, len: len, freq: this.zc / 2 / (this.n / sampleRate)});" +
    "        this.loud = false;" +
    "      }" +
    "    }" +
    "    this.prev = x;" +
    "  }" +
    "  return true;" +
    "}});";
  var track = v.srcObject.getAudioTracks()[0];
  if (window.MediaStreamTrackProcessor) {
    var reader = new MediaStreamTrackProcessor({track: track}).readable.getReader(), loud = false, quiet = 0, buf = null;
    var pump = function () {
      reader.read().then(function (r) {
        if (r.done) { return; }
        var d = r.value, now = performance.now(), n = d.numberOfFrames, sr = d.sampleRate;
        if (!buf || buf.length < n) { buf = new Float32Array(n); }
        d.copyTo(buf, {planeIndex: 0, format: 'f32-planar'});
        d.close();
        for (var i = 0; i < n; i++) {
          var big = Math.abs(buf[i]) > 0.1;
          if (!loud && big) {
            loud = true; quiet = 0;
            var at = performance.timeOrigin + now - (n - i) / sr * 1000;
            vigiaAV.sink.push({at: at, lat: at - Math.floor(at / 1000) * 1000});
          } else if (loud) {
            quiet = big ? 0 : quiet + 1;
            if (quiet > sr / 200) { loud = false; }
          }
        }
        pump();
      }).catch(function (e) { vigiaAV.err = String(e); });
    };
    pump();
  }
  var ctx = new AudioContext();
  ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([proc], {type: 'application/javascript'}))).then(function () {
    var src = ctx.createMediaStreamSource(v.srcObject);
    var node = new AudioWorkletNode(ctx, 'beeps');
    node.port.onmessage = function (e) {
      var ts = ctx.getOutputTimestamp();
      var at = performance.timeOrigin + ts.performanceTime + (e.data.onset - ts.contextTime) * 1000;
      vigiaAV.beeps.push({at: at, lat: at - Math.floor(at / 1000) * 1000, len: e.data.len * 1000, freq: e.data.freq});
    };
    src.connect(node);
    node.connect(ctx.destination);
    return ctx.resume();
  }).catch(function (e) { vigiaAV.err = String(e); });
})();
0`

// TestWebRTCAudioInChromium: a camera with AAC audio (synth's stamp
// camera, beeping each second of the wall clock) plays in the player page
// in headless Chromium over WebRTC with its sound: the page receives Opus
// (getStats: an inbound audio stream of audio/opus with bytes), the
// beeps decode at their pitch and length, and the audio comes in sync
// with the video: five beeps in a row within ITU-R BT.1359's
// detectability (audio at most 45 ms early, 125 ms late) at the page's
// audio output, measured from the stamps of the pictures shown and the
// beeps, within 50 beeps. One audio transcoder runs while the page plays
// and none after it leaves. A camera with G.711 (µ-law) is heard as it
// sent it (audio/PCMU), with no transcoder; its offset is printed, not
// checked (docs/live.md, Sound over WebRTC). It prints each beep's offset.
func TestWebRTCAudioInChromium(t *testing.T) {
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	exp := time.Now().Add(time.Hour)
	for _, codec := range []string{synth.AudioAAC, synth.AudioPCMU} {
		cam, err := synth.StartStampCamera(synth.StampConfig{Audio: codec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cam.Close)
		if err := a.RecordCamera(ingest.Camera{ID: codec, URL: cam.URL(), Trusted: true, Sound: true}); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("camera")
		player.Page(w, r, player.Params{CameraID: id, CameraName: id, LiveURL: a.WHEPURL(id, exp),
			VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/"})
	})
	mux.HandleFunc("GET /blank", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		camera, codec string
		transcoders   float64
		sync          bool
	}{
		{synth.AudioAAC, "audio/opus", 1, true},
		// Its offset is printed, not checked: on the loaded test machine
		// its audio and video were seen to drift apart at about 45 ms a
		// second in some runs (docs/live.md, Sound over WebRTC).
		{synth.AudioPCMU, "audio/PCMU", 0, false},
	} {
		t.Run(tc.camera, func(t *testing.T) {
			checkAVInChromium(t, srv.URL+"/player?camera="+tc.camera, srv.URL+"/blank", a.URL(), tc.codec, tc.transcoders, tc.sync)
		})
	}
}

// checkAVInChromium opens pageURL in a new headless Chromium, checks its
// sound (codec, beeps), its lip sync when sync is set, and that
// transcoders audio transcoders run on the node at app while it plays and
// none once the browser went to blank.
func checkAVInChromium(t *testing.T, pageURL, blank, app, codec string, transcoders float64, sync bool) {
	b := headless.Chromium(t)
	eval := func(js string, out any) {
		t.Helper()
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(js, out)); err != nil {
			t.Fatalf("evaluate %.60q: %v", js, err)
		}
	}
	if err := chromedp.Run(b.Ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(keepPeerConnectionsJS).Do(ctx)
		return err
	}), chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "live playback over WebRTC", func() bool {
		var st struct {
			Transport string  `json:"transport"`
			Time      float64 `json:"time"`
			Audio     int     `json:"audio"`
		}
		eval(`({transport: document.body.dataset.transport || '', time: document.getElementById('video').currentTime,
			audio: (document.getElementById('video').srcObject || {getAudioTracks: function () { return []; }}).getAudioTracks().length})`, &st)
		return st.Transport == "webrtc" && st.Time > 0 && st.Audio > 0
	})
	var ignored any
	eval(synth.StampReaderJS+avSyncJS, &ignored)

	type beep struct {
		At, Lat, Len, Freq float64
	}
	var av struct {
		Frames []struct{ At, Lat float64 }
		Beeps  []beep // heard through WebAudio
		Sink   []beep // delivered to the page's audio output
		Err    string
	}
	// beepOffset is the offset of a beep heard at at, latency lat: that
	// latency less the median of the pictures shown within half a second.
	// Positive: the audio is late.
	beepOffset := func(at, lat float64) (float64, bool) {
		var lats []float64
		for _, f := range av.Frames {
			if math.Abs(f.At-at) < 500 {
				lats = append(lats, f.Lat)
			}
		}
		if len(lats) == 0 {
			return 0, false
		}
		slices.Sort(lats)
		return lat - lats[len(lats)/2], true
	}
	// Chromium syncs audio and video once it has two sender reports of
	// each, and moves the delay it adds by steps, and again after the
	// delays change (a loaded machine): the audio is in sync once five
	// beeps in a row are within BT.1359 at the page's audio output. Up to
	// maxBeeps are listened to; without sync checked, beeps are.
	const beeps, maxBeeps, inARow = 30, 50, 5
	syncedAt := -1
	testenv.WaitFor(t, time.Duration(maxBeeps+10)*time.Second, "beeps heard", func() bool {
		eval(`window.vigiaAV`, &av)
		if av.Err != "" {
			t.Fatalf("audio measure: %s", av.Err)
		}
		if len(av.Beeps) < beeps || len(av.Sink) < beeps {
			return false
		}
		if !sync {
			return true
		}
		run := 0
		for i, bp := range av.Sink {
			off, ok := beepOffset(bp.At, bp.Lat)
			if ok && i >= 3 && off >= -45 && off <= 125 {
				run++
			} else {
				run = 0
			}
			if run == inARow {
				syncedAt = i - inARow + 1
				return true
			}
		}
		return len(av.Sink) >= maxBeeps
	})
	var stats struct {
		Bytes float64 `json:"bytes"`
		Codec string  `json:"codec"`
		Sync  float64 `json:"sync"` // audio's estimated playout time less video's, in sender time
		// What Chromium's jitter buffer did to the audio's length (ms):
		// audio it made up while it waited for late packets
		// (concealment), and samples it added to play slower or removed
		// to play faster (its time-stretching); and the packets it never
		// got.
		ConcealedMs float64 `json:"concealedMs"`
		InsertedMs  float64 `json:"insertedMs"`
		RemovedMs   float64 `json:"removedMs"`
		Lost        float64 `json:"lost"`
	}
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(async function () {
		var pc = window.vigiaPCs[window.vigiaPCs.length - 1], out = {bytes: 0, codec: '', sync: 0, concealedMs: 0, insertedMs: 0, removedMs: 0, lost: 0}, codecs = {}, play = {};
		var rs = await pc.getStats();
		rs.forEach(function (r) { if (r.type === 'codec') { codecs[r.id] = r.mimeType; } });
		rs.forEach(function (r) {
			if (r.type !== 'inbound-rtp') { return; }
			play[r.kind] = r.estimatedPlayoutTimestamp;
			if (r.kind === 'audio') {
				out.bytes += r.bytesReceived; out.codec = codecs[r.codecId] || '';
				out.lost += r.packetsLost || 0;
				if (r.totalSamplesReceived > 0) {
					var ms = 1000 * r.totalSamplesDuration / r.totalSamplesReceived;
					out.concealedMs += ms * (r.concealedSamples || 0);
					out.insertedMs += ms * (r.insertedSamplesForDeceleration || 0);
					out.removedMs += ms * (r.removedSamplesForAcceleration || 0);
				}
			}
		});
		out.sync = play.audio - play.video;
		return out;
	})()`, &stats, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
		t.Fatal(err)
	}
	if stats.Bytes <= 0 || stats.Codec != codec {
		t.Errorf("getStats: inbound audio %v bytes of %q, want %s", stats.Bytes, stats.Codec, codec)
	}

	// Each beep's offset, printed; the pitch and length of those heard
	// through WebAudio checked. A beep heard longer or shorter than it was
	// sent is Chromium's when its jitter buffer stretched or squeezed it:
	// the page heard the beeps longer in all by no more than Chromium says
	// it concealed or added, or shorter by no more than it removed, and no
	// packet was lost. On a loaded machine: one beep of 100 ms heard for
	// 199 ms with 99 ms concealed; two heard for 67 and 33 ms while the
	// buffer caught up. Audio the node cut is a hole in the timestamps,
	// which Chromium conceals (no shorter beep), and audio it added is
	// neither concealment nor time-stretching.
	longer, shorter := 0.0, 0.0
	offsets := func(name string, bs []beep, check bool) {
		var out []float64
		for i, bp := range bs {
			off, ok := beepOffset(bp.At, bp.Lat)
			if !ok {
				continue
			}
			t.Logf("%s beep %2d: %.0f ms after it was made (%.0f ms long, %.0f Hz); audio %+.0f ms against the pictures",
				name, i, bp.Lat, bp.Len, bp.Freq, off)
			if i < 3 {
				continue
			}
			out = append(out, off)
			if !check {
				continue
			}
			// Within 15 %: Chromium's jitter buffer plays faster while it
			// catches up, which the page's zero-crossing count reads as
			// up to 1,142 Hz (seen in passing runs); a wrong codec or
			// noise is far off.
			if math.Abs(bp.Freq-synth.BeepHz) > 0.15*synth.BeepHz {
				t.Errorf("beep %d decoded at %.0f Hz, sent %d Hz", i, bp.Freq, synth.BeepHz)
			}
			if want := float64(synth.BeepLength / time.Millisecond); math.Abs(bp.Len-want) > 25 {
				d := bp.Len - want
				switch {
				case stats.Lost == 0 && d > 0 && longer+d <= stats.ConcealedMs+stats.InsertedMs+25:
					longer += d
				case stats.Lost == 0 && d < 0 && shorter-d <= stats.RemovedMs+25:
					shorter -= d
				default:
					t.Errorf("beep %d lasts %.0f ms, sent %.0f ms (Chromium: %.0f ms concealed, %.0f added, %.0f removed in all; %.0f packets lost)", i, bp.Len, want, stats.ConcealedMs, stats.InsertedMs, stats.RemovedMs, stats.Lost)
					continue
				}
				t.Logf("beep %d lasts %.0f ms, sent %.0f ms: Chromium's jitter buffer (%.0f ms concealed, %.0f added, %.0f removed in all; no packet lost)", i, bp.Len, want, stats.ConcealedMs, stats.InsertedMs, stats.RemovedMs)
			}
		}
		if len(out) == 0 {
			t.Fatalf("%s: no beep measured against pictures", name)
		}
		slices.Sort(out)
		t.Logf("%s: audio against video from the 4th beep, %d beeps: median %+.0f ms, from %+.0f to %+.0f ms",
			name, len(out), out[len(out)/2], out[0], out[len(out)-1])
	}
	offsets("webaudio", av.Beeps, true)
	offsets("sink", av.Sink, false)
	t.Logf("Chromium's estimated playout: audio %+.0f ms against video (sender time); audio concealed %.0f ms, added %.0f, removed %.0f, %.0f packets lost", stats.Sync, stats.ConcealedMs, stats.InsertedMs, stats.RemovedMs, stats.Lost)
	if sync {
		if syncedAt < 0 {
			t.Errorf("audio never within BT.1359's -45 to +125 ms of the video for %d beeps in a row, in %d beeps", inARow, len(av.Sink))
		} else {
			var run []float64
			for _, bp := range av.Sink[syncedAt : syncedAt+inARow] {
				off, _ := beepOffset(bp.At, bp.Lat)
				run = append(run, off)
			}
			t.Logf("in sync from beep %d (about %d s after measuring began): %+.0f ms", syncedAt, syncedAt, run)
		}
	}
	mt := scrapeMetrics(t, app+"/metrics")
	if n := mt["vigia_live_audio_transcodes"]; n != transcoders {
		t.Errorf("%v audio transcoders while the page plays, want %v", n, transcoders)
	}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(blank)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the audio transcoder to stop after the page left", func() bool {
		return scrapeMetrics(t, app+"/metrics")["vigia_live_audio_transcodes"] == 0
	})
}
