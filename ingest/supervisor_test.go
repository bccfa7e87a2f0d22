package ingest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// fakeSource delivers one unit when sendUnit is set, then fails with err
// after the given time (or waits for the context).
type fakeSource struct {
	sendUnit bool
	after    time.Duration
	err      error
}

func (f *fakeSource) Run(ctx context.Context, sink Sink) error {
	if f.sendUnit {
		if err := sink.Tracks([]*media.Track{{Codec: media.H264, ClockRate: 90000}}); err != nil {
			return err
		}
		sink.Unit(&media.Unit{Key: true})
	}
	if f.after <= 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(f.after):
		return f.err
	}
}

type passiveSource struct{ fakeSource }

func (passiveSource) Passive() bool { return true }

type nopSink struct{}

func (nopSink) Tracks([]*media.Track) error { return nil }
func (nopSink) Unit(*media.Unit)            {}

type statusLog struct {
	mu    sync.Mutex
	codes []status.Code
	errs  []error
}

func (l *statusLog) add(c status.Code, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.codes = append(l.codes, c)
	l.errs = append(l.errs, err)
}

func (l *statusLog) get() ([]status.Code, []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]status.Code(nil), l.codes...), append([]error(nil), l.errs...)
}

// sequence returns a NewSource that hands out the sources one per attempt,
// the last one repeating.
func sequence(sources ...Source) func() (Source, error) {
	var mu sync.Mutex
	n := 0
	return func() (Source, error) {
		mu.Lock()
		defer mu.Unlock()
		s := sources[min(n, len(sources)-1)]
		n++
		return s, nil
	}
}

// runUntil runs sup until done reports true, failing t after 10 s, then
// stops it.
func runUntil(t *testing.T, sup *Supervisor, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); sup.Run(ctx) }()
	defer func() { cancel(); <-stopped }()
	testenv.WaitFor(t, 10*time.Second, "the supervisor's reports", done)
}

// runSupervisor runs a supervisor over the sources, one per attempt (the
// last one repeats), until want statuses were reported.
func runSupervisor(t *testing.T, want int, sources ...Source) ([]status.Code, []error) {
	t.Helper()
	var log statusLog
	sup := NewSupervisor(SupervisorConfig{
		Camera:     "c",
		NewSource:  sequence(sources...),
		Sink:       nopSink{},
		OnStatus:   log.add,
		BackoffMin: 10 * time.Millisecond,
		BackoffMax: 20 * time.Millisecond,
	})
	runUntil(t, sup, func() bool { codes, _ := log.get(); return len(codes) >= want })
	return log.get()
}

func TestSupervisorActiveSourceConnects(t *testing.T) {
	codes, _ := runSupervisor(t, 2, &fakeSource{sendUnit: true})
	if len(codes) < 2 || codes[0] != status.Connecting || codes[1] != status.Online {
		t.Fatalf("statuses %v, want CONECTANDO then ONLINE", codes)
	}
}

// A push camera waits for the camera: OFFLINE with the reason, never
// CONECTANDO, then ONLINE when media comes; after a drop it is OFFLINE and
// stays so while it waits again.
func TestSupervisorPassiveSourceWaitsOffline(t *testing.T) {
	drop := errors.New("publisher went away")
	codes, errs := runSupervisor(t, 3,
		&passiveSource{fakeSource{after: 50 * time.Millisecond, err: drop}}, // nothing published, then gone
		&passiveSource{fakeSource{sendUnit: true, after: 50 * time.Millisecond, err: drop}},
		&passiveSource{fakeSource{}})
	for _, c := range codes {
		if c == status.Connecting {
			t.Fatalf("statuses %v: a push camera is never CONECTANDO", codes)
		}
	}
	if len(codes) < 3 || codes[0] != status.Offline || codes[1] != status.Online || codes[2] != status.Offline {
		t.Fatalf("statuses %v, want OFFLINE, ONLINE, OFFLINE", codes)
	}
	if !errors.Is(errs[0], ErrAwaitingCamera) {
		t.Errorf("first OFFLINE reason %v, want ErrAwaitingCamera", errs[0])
	}
	if !errors.Is(errs[2], drop) {
		t.Errorf("OFFLINE after the drop: reason %v, want the drop", errs[2])
	}
}

// The wait before a retry doubles with each attempt that brings nothing
// and starts again from BackoffMin after one that delivered media, however
// short: a camera that drops every few seconds is not left waiting for
// BackoffMax while it is up.
func TestSupervisorBackoffResetsAfterMedia(t *testing.T) {
	const base0 = 10 * time.Millisecond
	fail := errors.New("connection refused")
	drop := errors.New("connection reset")
	sources := []Source{
		&fakeSource{after: time.Millisecond, err: fail}, // waits about 1×, 2×, 4×, 8× base0
		&fakeSource{after: time.Millisecond, err: fail},
		&fakeSource{after: time.Millisecond, err: fail},
		&fakeSource{after: time.Millisecond, err: fail},
		&fakeSource{sendUnit: true, after: time.Millisecond, err: drop}, // streamed, then dropped: 1× again
		&fakeSource{after: time.Millisecond, err: fail},                 // 2×
		&fakeSource{},
	}
	var mu sync.Mutex
	var waits []time.Duration
	sup := NewSupervisor(SupervisorConfig{
		Camera:     "c",
		NewSource:  sequence(sources...),
		Sink:       nopSink{},
		OnRetry:    func(w time.Duration) { mu.Lock(); waits = append(waits, w); mu.Unlock() },
		BackoffMin: base0,
		BackoffMax: time.Second,
	})
	runUntil(t, sup, func() bool { mu.Lock(); defer mu.Unlock(); return len(waits) >= 6 })
	mu.Lock()
	defer mu.Unlock()
	if len(waits) < 6 {
		t.Fatalf("%d retries, want 6", len(waits))
	}
	// Each wait is its base plus up to half of it in jitter.
	bases := []time.Duration{base0, 2 * base0, 4 * base0, 8 * base0, base0, 2 * base0}
	for i, base := range bases {
		if waits[i] < base || waits[i] > base+base/2 {
			t.Errorf("wait %d = %v, want %v to %v (waits %v)", i+1, waits[i], base, base+base/2, waits)
		}
	}
}
