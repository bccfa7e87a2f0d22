package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/bench"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// h264Offer returns a complete WHEP offer (candidates gathered) of a
// viewer receiving H.264.
func h264Offer(t *testing.T) string {
	t.Helper()
	pc, err := webrtc.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo,
		webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	return pc.LocalDescription().SDP
}

// clientFrom returns an HTTP client whose connections leave from the
// loopback address src.
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}}
}

// TestWHEPFlood: 400 offers with one viewer's live URL of camera a, and
// 400 more from the same address with live URLs of their own, all at
// once, against a node recording cameras a and b. The node answers at
// most webrtc.max_sessions_per_token of the first and
// webrtc.max_sessions_per_address in all from that address, refuses the
// rest with 429, a viewer of b elsewhere plays meanwhile, and both
// cameras record every frame.
func TestWHEPFlood(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "a", Codec: "h264", Small: true}, synth.CameraSpec{Path: "b", Codec: "h264", Small: true})
	c := s3Config(t, m)
	c.Motion.Enabled = false
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, id := range []string{"a", "b"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cam.URL(id), Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	waitSegments(t, st, "a", 2, 60*time.Second)
	waitSegments(t, st, "b", 2, 60*time.Second)
	offer := h264Offer(t)
	// The live stream of a has started (a first offer may get 503 while
	// the camera has no video yet).
	testenv.WaitFor(t, 20*time.Second, "camera a live", func() bool {
		res, err := http.Post(a.WHEPURL("a", time.Now().Add(time.Minute)), "application/sdp", strings.NewReader(offer))
		if err != nil {
			return false
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); loc != "" {
			req, _ := http.NewRequest(http.MethodDelete, a.URL()+loc, nil)
			if r, err := http.DefaultClient.Do(req); err == nil {
				r.Body.Close()
			}
		}
		return res.StatusCode == http.StatusCreated
	})

	from := time.Now()
	one := a.WHEPURL("a", time.Now().Add(time.Hour))
	hc := clientFrom("127.0.0.2")
	var mu sync.Mutex
	codes := map[string]map[int]int{"one token": {}, "own tokens": {}}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > 800 {
					return
				}
				kind, target := "one token", one
				if i%2 == 0 {
					kind, target = "own tokens", a.WHEPURL("a", time.Now().Add(time.Hour+time.Duration(i)*time.Second))
				}
				res, err := hc.Post(target, "application/sdp", strings.NewReader(offer))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				codes[kind][res.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	// Meanwhile a viewer of b, from 127.0.0.1, plays.
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := bench.RunWHEPViewers(t.Context(), []string{a.WHEPURL("b", time.Now().Add(time.Hour))}, 5*time.Second, true, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	var rep bench.ViewersReport
	for lines := bufio.NewScanner(pr); lines.Scan(); {
		if strings.HasPrefix(lines.Text(), "{") {
			_ = json.Unmarshal(lines.Bytes(), &rep)
		}
	}
	wg.Wait()
	to := time.Now()
	if err := <-errc; err != nil {
		t.Errorf("viewer of b: %v", err)
	}
	t.Logf("offers: %v; the viewer of b: %d connected, frames %v", codes, rep.Connected, rep.Frames)
	perToken, perAddr := c.WebRTC.MaxSessionsPerToken, c.WebRTC.MaxSessionsPerAddress
	if got := codes["one token"][http.StatusCreated]; got > perToken || got == 0 {
		t.Errorf("%d sessions answered with one live URL, want 1 to %d", got, perToken)
	}
	if got := codes["one token"][http.StatusCreated] + codes["own tokens"][http.StatusCreated]; got > perAddr {
		t.Errorf("%d sessions answered from one address, want at most %d", got, perAddr)
	}
	if got := codes["one token"][http.StatusTooManyRequests] + codes["own tokens"][http.StatusTooManyRequests]; got < 800-perAddr {
		t.Errorf("%d offers refused with 429, want at least %d", got, 800-perAddr)
	}
	if rep.Connected != 1 || len(rep.Frames) != 1 || rep.Frames[0] == 0 {
		t.Errorf("the viewer of b: %d connected, frames %v", rep.Connected, rep.Frames)
	}
	mt := scrapeMetrics(t, a.URL()+"/metrics")
	for _, r := range []string{"per_token", "per_address"} {
		if mt[fmt.Sprintf(`vigia_live_webrtc_requests_total{result=%q}`, r)] == 0 {
			t.Errorf("no offer counted as %s", r)
		}
	}
	for _, id := range []string{"a", "b"} {
		waitSegments(t, st, id, len(segments(t, st, id))+2, 30*time.Second)
		auditFrames(t, st, id, from, to)
	}
}
