//go:build cgo

package decoder

import (
	"runtime"
	"sync"
	"testing"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// Decoding on many threads, as cgo calls do over a long run, leaves glibc
// with at most two malloc arenas, not one per thread.
func TestDecodersOnManyThreadsShareTwoArenas(t *testing.T) {
	if mallocArenas() < 0 {
		t.Skip("not glibc: malloc arenas cannot be counted")
	}
	clip, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	const threads = 12
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, threads)
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine holds its own thread, so the decodes run on
			// 12 threads at the same time.
			runtime.LockOSThread()
			<-start
			d, err := New(media.H264, Options{})
			if err != nil {
				errs <- err
				return
			}
			defer d.Close()
			if _, err := d.DecodeStill(clip.Units[0].NALUs); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := mallocArenas(); n > 2 {
		t.Fatalf("%d malloc arenas after decoding on %d threads, want at most 2", n, threads)
	}
}

// A decoder made and closed leaves free chunks in glibc's arenas;
// ReleaseMemory hands their pages back.
func TestReleaseMemoryAfterDecoding(t *testing.T) {
	if mallocArenas() < 0 {
		t.Skip("not glibc")
	}
	clip, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d, err := New(media.H264, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.DecodeStill(clip.Units[0].NALUs); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	if !ReleaseMemory() {
		t.Fatal("nothing released after three decoders were closed")
	}
}
