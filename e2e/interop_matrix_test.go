package e2e

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
)

// The interop matrix: Vigia records cameras played by peers no one here
// wrote, on loopback, and every stored segment is judged (segmentJudgement):
// FFmpeg decodes it without a word; its frames are the clip's, in the
// clip's presentation order, none missing, starting at a keyframe; its
// frame count matches its duration at the clip's rate within 1 %; its
// audio spans its video and, against GStreamer, keeps lip sync.
// docs/recording.md lists the cells.
//
// When looking into a cell: VIGIA_MATRIX_CELLS (a regular expression)
// runs the cells it matches, VIGIA_KEEP_SEGMENTS (a directory) keeps the
// segments found wanting, VIGIA_MATRIX_LOG (a file) gets the node's whole
// log.

// Peers of the matrix.
const (
	peerGst = "gst" // GStreamer's gst-rtsp-server: qtdemux, parsers and payloaders
	peerFF  = "ff"  // FFmpeg's RTP muxer, published into a relay (gortsplib's server)
	peerMTX = "mtx" // MediaMTX, FFmpeg publishing into it
)

// cell is one camera of the matrix.
type cell struct {
	name      string // camera id
	peer      string
	server    string // the peer's server: a gst server, a relay, a MediaMTX
	video     string // videoConfigs
	audio     string // audioConfigs; "" for none
	transport string // tcp, udp, auto
	auth      string // "", basic, digest
	tls       bool
	sound     bool // the camera records audio (false: the audio track is left alone)

	// GStreamer
	sdpOnly  bool // parameter sets in the SDP only (else before every keyframe too)
	audioMTU int  // the AAC payloader splits frames over packets of this size
	tcpOnly  bool // the mount refuses RTP over UDP

	relay relayPathOptions // FFmpeg through the relay
	rtmp  bool             // FFmpeg publishes into MediaMTX over RTMP

	wrongPass bool   // the camera's URL has a wrong password
	failure   string // the reason of the ERRO PERMANENTE expected; "" for recording
	browser   bool   // a segment is played in Chromium through the player
	note      string // what the cell is about
}

func (c cell) lossy() bool { return c.relay.DropEvery > 0 || c.relay.DiscardFor > 0 }

// segments is how many segments of the cell are judged: the first of the
// connection and three after it; through the change of picture size (10 s
// into the clip) when there is one.
func (c cell) segments() int {
	if len(videoConfigs[c.video].sizes) > 1 {
		return 6
	}
	return 4
}

// matrixCells is the generated table of cells.
func matrixCells() []cell {
	var cells []cell
	add := func(c cell) {
		if c.transport == "" {
			c.transport = "tcp"
		}
		if c.audio != "" {
			c.sound = true
		}
		parts := []string{c.peer, c.video}
		if c.audio != "" {
			parts = append(parts, c.audio)
		}
		parts = append(parts, c.transport)
		if c.note != "" {
			parts = append(parts, c.note)
		}
		c.name = strings.Join(parts, "-")
		cells = append(cells, c)
	}
	codecs := []string{"h264-baseline", "h264-main", "h264-main-b", "h264-high", "h264-high-b", "h265", "h265-b"}
	// Every codec through each peer, the audio configurations spread over
	// them (GStreamer: one frame a packet; FFmpeg: several).
	audios := []string{"aac8k-mono", "aac8k-stereo", "aac16k-mono", "aac16k-stereo", "aac48k-mono", "aac48k-stereo", ""}
	for i, v := range codecs {
		add(cell{peer: peerGst, server: "plain", video: v, audio: audios[i], browser: v == "h264-high-b"})
		tr := []string{"tcp", "udp"}[i%2]
		add(cell{peer: peerFF, server: "ff", video: v, audio: audios[(i+3)%len(audios)], transport: tr, browser: v == "h264-main"})
	}
	for _, v := range []string{"h264-high-b", "h265", "h265-b"} {
		add(cell{peer: peerMTX, server: "mtx", video: v, audio: "aac48k-stereo"})
	}
	// AAC frames split over several packets.
	for _, a := range []string{"aac8k-mono", "aac16k-stereo", "aac48k-stereo"} {
		add(cell{peer: peerGst, server: "plain", video: "h264-main", audio: a, audioMTU: 120, note: "split"})
	}
	add(cell{peer: peerGst, server: "plain", video: "h264-high", audio: "aac48k-51", note: "split"})
	add(cell{peer: peerMTX, server: "mtx", video: "h264-high", audio: "aac48k-51", rtmp: true, note: "rtmp-split"})
	// A camera with audio whose sound is off: the audio track is not
	// asked for.
	add(cell{peer: peerGst, server: "plain", video: "h264-main", audio: "aac16k-mono", note: "muted"})
	// Transports.
	add(cell{peer: peerGst, server: "plain", video: "h264-high-b", audio: "aac48k-stereo", transport: "udp"})
	add(cell{peer: peerGst, server: "plain", video: "h265-b", audio: "aac16k-mono", transport: "auto"})
	add(cell{peer: peerGst, server: "plain", video: "h264-high", audio: "aac16k-mono", transport: "auto", tcpOnly: true, note: "tcponly"})
	add(cell{peer: peerFF, server: "ff", video: "h264-high-b", audio: "aac48k-stereo", transport: "auto"})
	add(cell{peer: peerMTX, server: "mtx", video: "h264-high-b", audio: "aac48k-stereo", transport: "udp"})
	add(cell{peer: peerMTX, server: "mtx", video: "h265-b", audio: "aac16k-mono", transport: "auto"})
	// Authentication.
	for _, tr := range []string{"tcp", "udp"} {
		add(cell{peer: peerGst, server: "basic", video: "h264-high", audio: "aac16k-mono", transport: tr, auth: "basic", note: "basic"})
		add(cell{peer: peerGst, server: "digest", video: "h264-high", audio: "aac16k-mono", transport: tr, auth: "digest", note: "digest"})
	}
	add(cell{peer: peerFF, server: "ff", video: "h264-high", audio: "aac16k-mono", auth: "basic", relay: relayPathOptions{Protected: true}, note: "basic"})
	add(cell{peer: peerFF, server: "ffd", video: "h264-high", audio: "aac16k-mono", auth: "digest", relay: relayPathOptions{Protected: true}, note: "digest"})
	add(cell{peer: peerMTX, server: "mtx", video: "h264-high", audio: "aac16k-mono", auth: "basic", note: "basic"})
	add(cell{peer: peerMTX, server: "mtxd", video: "h264-high", audio: "aac16k-mono", auth: "digest", note: "digest"})
	add(cell{peer: peerGst, server: "digest", video: "h264-high", auth: "digest", wrongPass: true, failure: ingest.ReasonAuth, note: "wrongpass"})
	add(cell{peer: peerMTX, server: "mtx", video: "h264-high", auth: "basic", wrongPass: true, failure: ingest.ReasonAuth, note: "wrongpass"})
	// RTSPS.
	add(cell{peer: peerGst, server: "tls", video: "h264-high-b", audio: "aac48k-stereo", tls: true, note: "rtsps"})
	add(cell{peer: peerFF, server: "fftls", video: "h264-high-b", audio: "aac48k-stereo", tls: true, note: "rtsps"})
	add(cell{peer: peerFF, server: "fftls", video: "h264-high", audio: "aac16k-mono", transport: "udp", tls: true, note: "rtsps"})
	add(cell{peer: peerMTX, server: "mtx", video: "h264-high-b", audio: "aac48k-stereo", tls: true, note: "rtsps"})
	add(cell{peer: peerMTX, server: "mtx", video: "h265", audio: "aac16k-mono", transport: "auto", tls: true, note: "rtsps"})
	// SRTP keys (MIKEY) of MediaMTX 1.20 that gortsplib's client does not
	// understand.
	add(cell{peer: peerMTX, server: "mtx", video: "h265", transport: "udp", tls: true, failure: ingest.ReasonTransport, note: "rtsps"})
	add(cell{peer: peerGst, server: "untrusted", video: "h264-high", tls: true, failure: ingest.ReasonTLS, note: "untrusted"})
	// Parameter sets: in the SDP only, in-band only; a new resolution.
	add(cell{peer: peerGst, server: "plain", video: "h264-high", audio: "aac16k-mono", sdpOnly: true, note: "sdponly"})
	add(cell{peer: peerGst, server: "plain", video: "h265", audio: "aac16k-mono", sdpOnly: true, note: "sdponly"})
	add(cell{peer: peerFF, server: "ff", video: "h264-inband", audio: "aac16k-mono", relay: relayPathOptions{StripParams: true}, note: "inbandonly"})
	add(cell{peer: peerGst, server: "plain", video: "h264-resize-b", audio: "aac16k-mono"})
	add(cell{peer: peerFF, server: "ff", video: "h264-resize-b", audio: "aac16k-mono"})
	add(cell{peer: peerMTX, server: "mtx", video: "h264-resize-b", audio: "aac16k-mono"})
	// RTCP: GStreamer, MediaMTX and the ff relay send sender reports;
	// this one sends none.
	add(cell{peer: peerFF, server: "ffnosr", video: "h264-high-b", audio: "aac16k-mono", note: "nosr"})
	// Frames lost at the source: a relay discarding half a second for a
	// reader that fell behind, and packets lost on UDP.
	for _, v := range []string{"h264-high", "h264-high-b"} {
		add(cell{peer: peerFF, server: "ff", video: v, audio: "aac16k-mono", relay: relayPathOptions{DiscardAt: 9 * time.Second, DiscardFor: 500 * time.Millisecond}, note: "discard"})
		add(cell{peer: peerFF, server: "ff", video: v, audio: "aac16k-mono", transport: "udp", relay: relayPathOptions{DropEvery: 211}, note: "loss"})
	}
	// The picture lost for longer than a clock jump's threshold (3 s)
	// while the sound goes on: the video after the hole has its sound.
	add(cell{peer: peerFF, server: "ff", video: "h264-high", audio: "aac16k-mono", relay: relayPathOptions{DiscardAt: 9 * time.Second, DiscardFor: 3500 * time.Millisecond, DiscardVideoOnly: true}, note: "videohole"})
	return cells
}

// TestInteropMatrix records every cell of matrixCells at once in one node
// and judges the first segments of each (cell.segments) (docs/recording.md,
// Interop matrix). MediaMTX cells run where its binary is (VIGIA_MEDIAMTX,
// set by make test from ../shared/peers); without it they are skipped,
// saying so.
//
// Not parallel with other tests (its cells are, with each other): each peer
// plays its clip once, 20 s, and every cell must record its segments within
// that window, which a machine busy with other tests' cameras does not
// leave it.
func TestInteropMatrix(t *testing.T) {
	cells := matrixCells()
	if re := os.Getenv("VIGIA_MATRIX_CELLS"); re != "" {
		// A subset of cells, by name (a regular expression), when looking
		// into one.
		var kept []cell
		for _, c := range cells {
			if regexp.MustCompile(re).MatchString(c.name) {
				kept = append(kept, c)
			}
		}
		cells = kept
	}
	mtxBin, mtxErr := testenv.FindMediaMTX()
	if mtxErr != nil {
		// Each MediaMTX cell is reported skipped, saying why.
		t.Logf("MediaMTX cells did not run: %v", mtxErr)
		var kept []cell
		for _, c := range cells {
			if c.peer != peerMTX {
				kept = append(kept, c)
				continue
			}
			t.Run(c.name, func(t *testing.T) { t.Skipf("MediaMTX cells did not run: %v", mtxErr) })
		}
		cells = kept
	}

	// Clips: encoded once, two at a time, cached across runs.
	cache := newClipCache(t)
	clips := map[string]*clip{}
	{
		var mu sync.Mutex
		var wg sync.WaitGroup
		var errs []error
		sem := make(chan struct{}, 2)
		for _, c := range cells {
			key := c.video + "+" + c.audio
			mu.Lock()
			_, seen := clips[key]
			if !seen {
				clips[key] = nil // claimed: one encoding per clip
			}
			mu.Unlock()
			if seen {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				cl, err := cache.get(c.video, c.audio)
				mu.Lock()
				defer mu.Unlock()
				clips[key] = cl
				if err != nil {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	clipOf := func(c cell) *clip { return clips[c.video+"+"+c.audio] }

	m := testenv.SharedMinIO(t)
	conf := s3Config(t, m)
	log, _ := testLogger(t)
	if p := os.Getenv("VIGIA_MATRIX_LOG"); p != "" {
		// The node's whole log, when looking into a cell.
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		log = zap.New(zapcore.NewTee(log.Core(), zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(f), zapcore.DebugLevel)))
	}
	a := startApp(t, conf, log)
	st := openS3(t, conf)

	// Peers.
	gstServers := map[string]gstServer{
		"plain":     {},
		"basic":     {Auth: "basic", User: viewerUser, Pass: viewerPass},
		"digest":    {Auth: "digest", User: viewerUser, Pass: viewerPass},
		"tls":       {Cert: tlsCert, Key: tlsKey},
		"untrusted": {Cert: untrustedCert, Key: untrustedKey},
	}
	mounts := []gstMount{}
	for _, c := range cells {
		if c.peer == peerGst {
			video := "h264"
			if clipOf(c).video.codec == "hevc" {
				video = "h265"
			}
			mounts = append(mounts, gstMount{Server: c.server, Path: "/" + c.name, File: clipOf(c).path, Video: video,
				Audio: c.audio != "", InBand: !c.sdpOnly, AudioMTU: c.audioMTU, TCPOnly: c.tcpOnly})
		}
	}
	gstPorts := startGstMatrix(t, gstServers, mounts)
	relays := map[string]*matrixRelay{
		"ff":     startRelay(t, relayOptions{Auth: "basic"}),
		"ffd":    startRelay(t, relayOptions{Auth: "digest"}),
		"ffnosr": startRelay(t, relayOptions{NoSenderReports: true}),
		"fftls":  startRelay(t, relayOptions{TLS: true}),
	}
	mtxs := map[string]*mediaMTX{}
	if mtxErr == nil {
		mtxs["mtx"] = startMediaMTXWith(t, mtxBin, mediaMTXOptions{AuthMethods: []string{"basic"}, TLS: true})
		mtxs["mtxd"] = startMediaMTXWith(t, mtxBin, mediaMTXOptions{AuthMethods: []string{"digest"}})
	}

	// Publishers, then the cameras once their streams are up.
	mtxPath := func(c cell) string {
		if c.auth != "" {
			return "a/" + c.name
		}
		return "o/" + c.name
	}
	for _, c := range cells {
		switch c.peer {
		case peerFF:
			r := relays[c.server]
			r.add(c.name, c.relay)
			// Packets of 1400 bytes at most: gortsplib's server drops the
			// packets of a stream served over RTSPS that leave no room for
			// SRTP's overhead within 1472 bytes.
			publish(t, clipOf(c).path, r.pubURL+"/"+c.name, "-f", "rtsp", "-rtsp_transport", "tcp", "-pkt_size", "1400")
		case peerMTX:
			mx := mtxs[c.server]
			if c.rtmp {
				publish(t, clipOf(c).path, mx.rtmp+"/"+mtxPath(c), "-f", "flv")
			} else {
				publish(t, clipOf(c).path, mx.rtsp+"/"+mtxPath(c), "-f", "rtsp", "-rtsp_transport", "tcp")
			}
		}
	}
	urls := map[string]string{}
	for _, c := range cells {
		var base string
		switch c.peer {
		case peerGst:
			scheme := "rtsp"
			if c.tls {
				scheme = "rtsps"
			}
			base = fmt.Sprintf("%s://127.0.0.1:%d/%s", scheme, gstPorts[c.server], c.name)
		case peerFF:
			r := relays[c.server]
			testenv.WaitFor(t, 20*time.Second, "ffmpeg publishing "+c.name, func() bool { return r.ready(c.name) })
			base = r.url + "/" + c.name
		case peerMTX:
			mx := mtxs[c.server]
			testenv.WaitFor(t, 20*time.Second, "ffmpeg publishing "+c.name, func() bool { return mx.publishing(mtxPath(c)) })
			base = mx.rtsp + "/" + mtxPath(c)
			if c.tls {
				base = mx.rtsps + "/" + mtxPath(c)
			}
		}
		if c.auth != "" {
			pass := viewerPass
			if c.wrongPass {
				pass = "wrong-" + pass
			}
			u, err := url.Parse(base)
			if err != nil {
				t.Fatal(err)
			}
			u.User = url.UserPassword(viewerUser, pass)
			base = u.String()
		}
		urls[c.name] = base
		if err := a.RecordCamera(ingest.Camera{ID: c.name, URL: base, Transport: c.transport, Sound: c.sound, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range cells {
				s, _ := a.Recorder().Status(c.name)
				t.Logf("camera %s: status %d %q", c.name, s.Code, s.LastError)
			}
		}
	})

	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.failure != "" {
				testenv.WaitFor(t, 30*time.Second, "ERRO PERMANENTE", func() bool {
					s, _ := a.Recorder().Status(c.name)
					return s.Code == status.Permanent
				})
				s, _ := a.Recorder().Status(c.name)
				if !strings.Contains(s.LastError, c.failure) {
					t.Errorf("last error %q, want it to say %q", s.LastError, c.failure)
				}
				if strings.Contains(s.LastError, viewerPass) {
					t.Errorf("the camera password appears in its status")
				}
				return
			}
			segs := waitSegments(t, st, c.name, c.segments(), 60*time.Second)
			if c.lossy() {
				// Two segments after the first gap: the first after it is
				// judged whole (its sound included), the last judged is not.
				testenv.WaitFor(t, 60*time.Second, "two segments after a loss", func() bool {
					segs = segments(t, st, c.name)
					g := hasGap(segs, 0)
					return g >= 0 && len(segs) > g+1
				})
			}
			judgeCell(t, st, c, clipOf(c), segs)
		})
	}
	t.Run("chromium", func(t *testing.T) {
		t.Parallel()
		for _, c := range cells {
			if c.browser {
				// Four segments: the playlist holds what is stored when the
				// page loads, and from a second into the second segment,
				// three segments of 2 s leave 3 s to play only just.
				segs := waitSegments(t, st, c.name, 4, 90*time.Second)
				playInChromium(t, st, c.name, segs[1])
			}
		}
	})
}

// hasGap returns the index of the first segment after from that does not
// start where the one before it ended (within a frame), or -1.
func hasGap(segs []stored, from int) int {
	for i := max(from, 1); i < len(segs); i++ {
		if d := segs[i].StartMs - segs[i-1].EndMs(); d > 1000/clipFPS || d < -1 {
			return i
		}
	}
	return -1
}

// judgeCell judges the first segments of a cell's recording, and that
// consecutive segments follow each other: the next one starts where the
// last one ended, in time and in the clip's frames, except after a loss.
func judgeCell(t *testing.T, st storage.Store, c cell, cl *clip, segs []stored) {
	t.Helper()
	n := c.segments()
	if c.lossy() {
		n = max(n, hasGap(segs, 0)+2)
	}
	segs = segs[:min(n, len(segs))]
	prevLast := -1
	sizes := map[[2]int]bool{}
	for i, s := range segs {
		path := download(t, st, s.Key)
		p, err := probeSegment(path)
		if err != nil {
			t.Fatal(err)
		}
		gap := i > 0 && hasGap(segs[i-1:i+1], 0) == 1
		audio := c.audio
		if !c.sound {
			audio = ""
		}
		j := segmentJudgement{clip: cl, first: i == 0 || gap, lossy: c.lossy(), audio: audio}
		// Lip sync is judged against GStreamer, whose sender reports are
		// exact, from the second segment on (the first may come before
		// the first report). FFmpeg's audio is placed by arrival, about
		// 250 ms late, until its reports are in, and MediaMTX re-times
		// what it relays (FFmpeg records MediaMTX's streams 265 ms late
		// itself; docs/recording.md, Interop matrix); they are measured and
		// logged. FFmpeg sends audio up to 0.4 s after the video of the
		// same time: what arrives after the keyframe that ends a segment
		// is not in it.
		j.sync = c.peer == peerGst && i > 0
		if c.peer != peerGst {
			j.audioLate = 0.4
		}
		if c.lossy() && (i+1 >= len(segs) || hasGap(segs[i:i+2], 0) == 1) {
			// Before a loss: audio is lost with the video (a relay
			// discarding drops both), and FFmpeg's audio, sent up to
			// 0.4 s after the video of its time, is lost earlier in the
			// segment than its video.
			j.audioLost = true
		}
		problems, first, last := j.judge(p)
		if offs := j.syncOffsets(p, clipPositions(cl, p)); len(offs) > 0 {
			t.Logf("%s segment %d: audio off the video by %.0f ms", c.name, i, 1000*offs[0])
		}
		if i > 0 && !gap && first >= 0 && prevLast >= 0 && first != prevLast+1 {
			problems = append(problems, fmt.Sprintf("starts at frame %d of the clip, the segment before ended at %d", first, prevLast))
		}
		if gap && !c.lossy() {
			problems = append(problems, fmt.Sprintf("a gap of %d ms before it", s.StartMs-segs[i-1].EndMs()))
		}
		for _, pr := range problems {
			t.Errorf("segment %d (%s): %s", i, s.Key, pr)
		}
		if len(problems) > 0 && os.Getenv("VIGIA_KEEP_SEGMENTS") != "" {
			keep := fmt.Sprintf("%s/%s-%d.mp4", os.Getenv("VIGIA_KEEP_SEGMENTS"), c.name, i)
			if b, err := os.ReadFile(path); err == nil {
				_ = os.WriteFile(keep, b, 0o644)
			}
		}
		prevLast = last
		if p.Video != nil {
			sizes[[2]int{p.Video.Width, p.Video.Height}] = true
		}
	}
	if want := len(cl.video.sizes); len(sizes) != want {
		t.Errorf("%d picture sizes in %d segments, want the clip's %d", len(sizes), len(segs), want)
	}
	if c.lossy() && hasGap(segs, 0) < 0 {
		t.Errorf("no gap in %d segments of a camera that lost packets", len(segs))
	}
	keys := make([]string, len(segs))
	for i, s := range segs {
		keys[i] = fmt.Sprintf("%d+%d", s.StartMs, s.DurMs)
	}
	sort.Strings(keys)
	t.Logf("%d segments judged: %s", len(segs), strings.Join(keys, " "))
}
