package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/sign"
	vstream "github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
)

var testSecret = []byte("live test secret 0123456789")

// testKeys are the keys of testSecret.
var testKeys = mustKeys(testSecret)

func mustKeys(secret []byte) *sign.Keys {
	k, err := sign.New(secret)
	if err != nil {
		panic(err)
	}
	return k
}

// newTestServer returns a Server with its own registry.
func newTestServer(t testing.TB, cfg Config) (*Server, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg.Keys = testKeys
	cfg.Registerer = reg
	return New(cfg), reg
}

// counter returns the sum of the samples of the counter named name whose
// labels include labels (name=value pairs).
func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// source plays a fixture clip as one run of a camera: units in decoding
// order with PTS from the start of the run, looping the clip.
type source struct {
	t     testing.TB
	clip  *synth.Clip
	audio *synth.AudioClip // optional, track 1
	start time.Time
	n     int // next video frame
	na    int // next audio frame
}

func newSource(t testing.TB, codec string, small bool) *source {
	t.Helper()
	clip, err := synth.Fixture(codec, small)
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return &source{t: t, clip: clip, start: time.Now()}
}

func (s *source) withAudio() *source {
	a, err := synth.AudioFixture()
	if err != nil {
		s.t.Fatalf("audio fixture: %v", err)
	}
	s.audio = a
	return s
}

// tracks returns the tracks of the run.
func (s *source) tracks() []*media.Track {
	v := s.clip.Track()
	out := []*media.Track{&v}
	if s.audio != nil {
		a := s.audio.Track()
		out = append(out, &a)
	}
	return out
}

func (s *source) frameTime(n int) time.Duration {
	return time.Duration(float64(n) * float64(time.Second) / s.clip.FPS)
}

// next returns the next video unit and, before it, the audio units that
// precede it.
func (s *source) next() []*media.Unit {
	var out []*media.Unit
	pts := s.frameTime(s.n)
	if s.audio != nil {
		for {
			apts := time.Duration(int64(s.na) * 1024 * int64(time.Second) / int64(s.audio.SampleRate()))
			if apts > pts {
				break
			}
			u := s.audio.Units[s.na%len(s.audio.Units)]
			u.Track, u.PTS, u.DTS, u.Time = 1, apts, apts, s.start.Add(apts)
			out = append(out, &u)
			s.na++
		}
	}
	u := s.clip.Units[s.n%len(s.clip.Units)]
	u.Track, u.PTS, u.DTS, u.Time = 0, pts, pts, s.start.Add(pts)
	s.n++
	return append(out, &u)
}

// untilDue waits until the time of pts in the run (start + pts) and
// reports whether it came before ctx ended. A source paced so keeps to the
// wall clock on a loaded machine: what a stall held back goes at once
// after it, as a camera's packets do after a network stall, where a
// ticker would drop ticks and put the stream behind for good.
func (s *source) untilDue(ctx context.Context, pts time.Duration) bool {
	wait := time.Until(s.start.Add(pts))
	if wait <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// key reports whether the next video unit is a keyframe.
func (s *source) key() bool { return s.clip.Units[s.n%len(s.clip.Units)].Key }

// burst sends n video frames (and the audio between them) to c at once.
func (s *source) burst(c vstream.Consumer, n int) {
	for range n {
		for _, u := range s.next() {
			c.Unit(u)
		}
	}
}

// feed sends n video frames, letting the stream's goroutine handle each
// before the next (inside a synctest bubble), so none is dropped.
func (s *source) feed(c vstream.Consumer, n int) {
	for range n {
		s.burst(c, 1)
		synctest.Wait()
	}
}

// feedPaced is feed at the clip's frame rate: it sleeps a frame's duration
// after each frame (inside a synctest bubble, where time is fake).
func (s *source) feedPaced(c vstream.Consumer, n int) {
	for range n {
		s.burst(c, 1)
		time.Sleep(s.frameTime(1))
	}
}

// gop returns the frames from one keyframe to the next.
func (s *source) gop() int { return s.clip.GOP() }

// liveURL returns the path and query of camera's file with a token valid
// for an hour.
func liveURL(camera, file string) string {
	q := Token(testKeys, camera, time.Now().Add(time.Hour))
	return "/live/" + url.PathEscape(camera) + "/" + file + "?" + q.Encode()
}

// get serves one request for target synchronously.
func get(h http.Handler, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

// request is a request served in its own goroutine.
type request struct {
	done chan *httptest.ResponseRecorder
	res  *httptest.ResponseRecorder
}

// goGet starts serving a request for target in a goroutine; the request
// ends with the test.
func goGet(t *testing.T, h http.Handler, target string) *request {
	r := &request{done: make(chan *httptest.ResponseRecorder, 1)}
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		r.done <- rec
	}()
	return r
}

// answered reports whether the request was answered, without waiting.
func (r *request) answered() bool {
	if r.res != nil {
		return true
	}
	select {
	case r.res = <-r.done:
		return true
	default:
		return false
	}
}

// wait returns the answer, waiting for it.
func (r *request) wait() *httptest.ResponseRecorder {
	if r.res == nil {
		r.res = <-r.done
	}
	return r.res
}

// valve stalls a stream's goroutine (through Server.hookUnit) while shut.
type valve struct {
	mu     sync.Mutex
	ch     chan struct{}
	isOpen bool
}

func newValve() *valve {
	v := &valve{ch: make(chan struct{})}
	v.open()
	return v
}

func (v *valve) shut() {
	v.mu.Lock()
	if v.isOpen {
		v.ch, v.isOpen = make(chan struct{}), false
	}
	v.mu.Unlock()
}

// open lets the goroutine go; it may be called when open already.
func (v *valve) open() {
	v.mu.Lock()
	if !v.isOpen {
		close(v.ch)
		v.isOpen = true
	}
	v.mu.Unlock()
}

func (v *valve) pass() {
	v.mu.Lock()
	ch := v.ch
	v.mu.Unlock()
	<-ch
}

// playlistURI returns the first URI line of a playlist.
func playlistURI(t *testing.T, pl string) string {
	t.Helper()
	for line := range strings.Lines(pl) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	t.Fatalf("no URI in playlist:\n%s", pl)
	return ""
}
