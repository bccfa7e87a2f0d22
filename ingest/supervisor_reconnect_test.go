package ingest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/media"
)

var errRefused = errors.New("connection refused")

// fakeCamera is a camera that is down during [downAt, upAt) of the
// bubble's clock and streams otherwise; streaming says whether it delivers
// media when its port answers (false: the port answers, the stream fails).
type fakeCamera struct {
	downAt, upAt time.Time
	broken       bool // the port answers but every session fails

	mu       sync.Mutex
	attempts []time.Time
	probes   atomic.Int64
}

func (c *fakeCamera) up(now time.Time) bool { return now.Before(c.downAt) || !now.Before(c.upAt) }

// source returns a source of the camera that implements Prober when
// probe is set.
func (c *fakeCamera) source(probe bool) Source {
	if probe {
		return probingSource{plainSource{c}}
	}
	return plainSource{c}
}

type plainSource struct{ c *fakeCamera }

func (p plainSource) Run(ctx context.Context, sink Sink) error {
	c := p.c
	now := time.Now()
	c.mu.Lock()
	c.attempts = append(c.attempts, now)
	c.mu.Unlock()
	if !c.up(now) || c.broken {
		return errRefused
	}
	if err := sink.Tracks([]*media.Track{{Codec: media.H264, ClockRate: 90000}}); err != nil {
		return err
	}
	sink.Unit(&media.Unit{Key: true})
	// Stream until the camera goes down or ctx ends.
	t := time.NewTimer(time.Until(c.downAt))
	if !now.Before(c.downAt) {
		t.Stop()
		<-ctx.Done()
		return ctx.Err()
	}
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errors.New("connection reset")
	}
}

type probingSource struct{ plainSource }

func (p probingSource) Probe(ctx context.Context) error {
	p.c.probes.Add(1)
	if !p.c.up(time.Now()) {
		return errRefused
	}
	return nil
}

func (c *fakeCamera) attemptTimes() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.attempts...)
}

// runFor runs sup in the bubble for d of its time, then stops it.
func runFor(sup *Supervisor, d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sup.Run(ctx) }()
	time.Sleep(d)
	cancel()
	<-done
}

// A probed camera down for 20 s and for 3 minutes is connected again
// within a second or so (1 s plus jitter) of answering, whatever the
// outage: during the fast retries (the first FastFor, 2 minutes) by a
// session a second, after them by its probe. Past the fast retries, no
// session is attempted while the camera does not answer: the outage costs
// a probe a second.
func TestSupervisorReconnectsWhenProbeAnswers(t *testing.T) {
	for _, outage := range []time.Duration{20 * time.Second, 3 * time.Minute} {
		t.Run(outage.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				cam := &fakeCamera{downAt: t0.Add(10 * time.Second), upAt: t0.Add(10*time.Second + outage)}
				sup := NewSupervisor(SupervisorConfig{Camera: "c", NewSource: func() (Source, error) { return cam.source(true), nil }, Sink: nopSink{}})
				runFor(sup, 10*time.Second+outage+30*time.Second)
				at := cam.attemptTimes()
				last := at[len(at)-1]
				if late := last.Sub(cam.upAt); late < 0 || late > 1200*time.Millisecond {
					t.Errorf("reconnected %v after the camera answered, want at most 1.2 s", late)
				}
				// The last fast retry may be scheduled just before the end
				// of the 2 minutes, for up to 1.2 s later.
				fastEnd := cam.downAt.Add(2*time.Minute + 1200*time.Millisecond)
				var fast, slow int
				for _, a := range at[1 : len(at)-1] {
					if a.Before(fastEnd) {
						fast++
					} else {
						slow++
					}
				}
				inFast := min(outage, 2*time.Minute)
				if want := int(inFast / time.Second); fast < want*8/10 || fast > want*13/10 {
					t.Errorf("%d sessions in the first %v of the outage, want about one a second", fast, inFast)
				}
				if slow != 0 {
					t.Errorf("%d sessions attempted past the fast retries while the camera did not answer, want none", slow)
				}
				probes := cam.probes.Load()
				if outage <= 2*time.Minute && probes != 0 {
					t.Errorf("%d probes during the fast retries, want none", probes)
				}
				if outage > 2*time.Minute {
					if secs := int64((outage - 2*time.Minute) / time.Second); probes < secs*8/10 || probes > secs*13/10+2 {
						t.Errorf("%d probes in the last %v of the outage, want about one a second", probes, outage-2*time.Minute)
					}
				}
			})
		})
	}
}

// A camera without a probe is retried every FastRetry (with jitter) for
// FastFor, then with a backoff doubling up to BackoffMax.
func TestSupervisorFastRetriesThenBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		cam := &fakeCamera{downAt: t0, upAt: t0.Add(time.Hour)}
		sup := NewSupervisor(SupervisorConfig{Camera: "c", NewSource: func() (Source, error) { return cam.source(false), nil }, Sink: nopSink{},
			FastFor: 30 * time.Second, BackoffMax: 16 * time.Second})
		runFor(sup, 3*time.Minute)
		at := cam.attemptTimes()
		var slow []time.Duration
		for i := 1; i < len(at); i++ {
			gap := at[i].Sub(at[i-1])
			if at[i-1].Sub(t0) < 30*time.Second {
				if gap < 800*time.Millisecond || gap > 1200*time.Millisecond {
					t.Errorf("attempt %d: %v after the previous one during the fast retries, want 0.8 to 1.2 s", i, gap)
				}
				continue
			}
			slow = append(slow, gap)
		}
		bases := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 16 * time.Second}
		if len(slow) < len(bases) {
			t.Fatalf("%d attempts after the fast retries, want at least %d: %v", len(slow), len(bases), slow)
		}
		for i, base := range bases {
			if slow[i] < base || slow[i] > base+base/2 {
				t.Errorf("backoff %d: %v, want %v to %v (all %v)", i+1, slow[i], base, base+base/2, slow)
			}
		}
	})
}

// A camera whose port answers but whose stream fails is retried every
// second for FastFor, then on the backoff: probes that keep succeeding do
// not bring an attempt before its time, and none is sent during the fast
// retries.
func TestSupervisorOpenPortBrokenStreamBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		cam := &fakeCamera{downAt: t0, upAt: t0, broken: true}
		sup := NewSupervisor(SupervisorConfig{Camera: "c", NewSource: func() (Source, error) { return cam.source(true), nil }, Sink: nopSink{},
			FastFor: 20 * time.Second, BackoffMax: 60 * time.Second})
		runFor(sup, 10*time.Minute)
		at := cam.attemptTimes()
		if p := cam.probes.Load(); p == 0 {
			t.Errorf("no probe after the fast retries")
		}
		fast, slow := 0, 0
		for _, a := range at {
			if a.Sub(t0) <= 21*time.Second {
				fast++
			} else {
				slow++
			}
		}
		// One every 0.8 to 1.2 s, no probe.
		if fast < 17 || fast > 28 {
			t.Errorf("%d attempts in the first 20 s, want 17 to 28", fast)
		}
		// 1+2+4+8+16+32 s, then one a minute: about 14 in the 9.5 minutes left.
		if slow < 10 || slow > 18 {
			t.Errorf("%d attempts in the 9.5 minutes after the fast retries, want about 14", slow)
		}
	})
}

// Handshakes bounds the attempts in progress: with room for 2, 6 cameras
// that accept and send nothing connect 2 at a time, each holding its place
// HandshakeHold at most; one that delivers media gives its place back at
// once.
func TestSupervisorHandshakesBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{}, 2)
		var inFlight, peak atomic.Int64
		started := make(chan struct{}, 16)
		silent := sourceFunc(func(ctx context.Context, sink Sink) error {
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			started <- struct{}{}
			<-ctx.Done()
			inFlight.Add(-1)
			return ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 6 {
			sup := NewSupervisor(SupervisorConfig{Camera: "c", NewSource: func() (Source, error) { return silent, nil }, Sink: nopSink{},
				Handshakes: gate, HandshakeHold: 3 * time.Second})
			wg.Go(func() { sup.Run(ctx) })
		}
		synctest.Wait()
		if n := len(started); n != 2 {
			t.Fatalf("%d attempts started at once, want 2", n)
		}
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		if n := len(started); n != 4 {
			t.Fatalf("%d attempts started after one hold, want 4", n)
		}
		cancel()
		wg.Wait()

		// A camera that delivers media frees its place at its first unit.
		gate = make(chan struct{}, 1)
		ctx, cancel = context.WithCancel(context.Background())
		defer cancel()
		streams := sourceFunc(func(ctx context.Context, sink Sink) error {
			sink.Unit(&media.Unit{Key: true})
			<-ctx.Done()
			return ctx.Err()
		})
		for range 3 {
			sup := NewSupervisor(SupervisorConfig{Camera: "c", NewSource: func() (Source, error) { return streams, nil }, Sink: nopSink{}, Handshakes: gate})
			wg.Go(func() { sup.Run(ctx) })
		}
		synctest.Wait()
		if n := len(gate); n != 0 {
			t.Errorf("%d places held by streaming cameras, want 0", n)
		}
		cancel()
		wg.Wait()
	})
}

type sourceFunc func(ctx context.Context, sink Sink) error

func (f sourceFunc) Run(ctx context.Context, sink Sink) error { return f(ctx, sink) }
