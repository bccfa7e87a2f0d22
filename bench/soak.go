package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"
)

// Sample is the process's resources at one time of a soak run.
type Sample struct {
	AtS     float64 `json:"at_s"`
	RSSMiB  float64 `json:"rss_mib"`
	HeapMiB float64 `json:"heap_mib"`
	// LiveHeapMiB is the heap marked live by the last garbage collection:
	// unlike HeapMiB it does not swing with the collector's cycle.
	LiveHeapMiB float64 `json:"live_heap_mib"`
	// GoMiB is the memory the Go runtime holds from the system (heap,
	// stacks, metadata) less what it returned; AnonMiB and FileMiB split
	// the resident set. Anonymous memory beyond GoMiB is C allocations
	// (FFmpeg's decoders) and the fragment buffers.
	GoMiB      float64 `json:"go_mib"`
	AnonMiB    float64 `json:"anon_mib"`
	FileMiB    float64 `json:"file_mib"`
	Goroutines int     `json:"goroutines"`
	OpenFiles  int     `json:"open_files"`
}

// Soak is the growth of the resources over the window, from a least-squares
// line through the samples, in percent of the mean per hour.
type Soak struct {
	Samples                []Sample `json:"samples"`
	RSSGrowthPctPerHour    float64  `json:"rss_growth_pct_per_hour"`
	HeapGrowthPctPerHour   float64  `json:"heap_growth_pct_per_hour"`
	LiveHeapGrowthPctPerHr float64  `json:"live_heap_growth_pct_per_hour"`
	GoGrowthPctPerHr       float64  `json:"go_growth_pct_per_hour"`
	// OtherAnonGrowthPctPerHr is the growth of anonymous memory outside the
	// Go runtime (C allocations, fragment buffers).
	OtherAnonGrowthPctPerHr float64 `json:"other_anon_growth_pct_per_hour"`
	GoroutineGrowthPctPerHr float64 `json:"goroutine_growth_pct_per_hour"`
	OpenFileGrowthPctPerHr  float64 `json:"open_file_growth_pct_per_hour"`
}

// sampling is when sampleResources samples.
type sampling struct {
	every time.Duration // 0: no sampling
	// cycle, when set, is the period of a load that comes and goes on the
	// wall clock (the flapping cameras go down at every multiple of it):
	// every is rounded up to a multiple of cycle and each sample is taken
	// at offset into a cycle, so that all samples see the same phase of
	// the load and a trend is not hidden by where in the cycle each fell.
	cycle, offset time.Duration
}

// firstWait returns how long to wait from now for the first sample.
func (sp sampling) firstWait(now time.Time) time.Duration {
	if sp.cycle <= 0 {
		return 0
	}
	next := now.Truncate(sp.cycle).Add(sp.offset)
	for !next.After(now) {
		next = next.Add(sp.cycle)
	}
	return next.Sub(now)
}

// interval returns every, rounded up to a multiple of cycle.
func (sp sampling) interval() time.Duration {
	if sp.cycle <= 0 || sp.every%sp.cycle == 0 {
		return sp.every
	}
	return (sp.every/sp.cycle + 1) * sp.cycle
}

// sampleResources samples for d, handing each sample to each as it is
// taken; nil when sp.every is 0. Each sample follows two collections, the
// second returning free memory to the system (debug.FreeOSMemory), so the
// resident set measures what the process keeps, not where the collector
// was in its cycle nor what its pools cached: a sync.Pool keeps what it
// held through one collection and lets it go at the next, so after one
// collection the unit buffers pooled for reuse (media.Buffer, tens of MiB
// with 100 cameras, more or less depending on the moment) were counted
// when the recorder's own periodic collection had not just run, and not
// when it had. A leak shows as a trend; the collector's swings and the
// pools' filling do not.
func sampleResources(ctx context.Context, sp sampling, d time.Duration, each func(Sample)) []Sample {
	if sp.every <= 0 {
		return nil
	}
	end := time.NewTimer(d)
	defer end.Stop()
	first := time.NewTimer(sp.firstWait(time.Now()))
	select {
	case <-ctx.Done():
		first.Stop()
		return nil
	case <-end.C:
		first.Stop()
		return nil
	case <-first.C:
	}
	start := time.Now()
	var out []Sample
	take := func() {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss, _ := procRSS(0)
		fds, _ := os.ReadDir("/proc/self/fd")
		anon, file, _ := procRSSParts()
		out = append(out, Sample{
			AnonMiB: mib(anon), FileMiB: mib(file),
			AtS: time.Since(start).Seconds(), RSSMiB: mib(rss), HeapMiB: mib(int64(ms.HeapInuse)),
			LiveHeapMiB: mib(liveHeap()), GoMiB: mib(int64(ms.Sys - ms.HeapReleased)),
			Goroutines: runtime.NumGoroutine(), OpenFiles: len(fds),
		})
		if each != nil {
			each(out[len(out)-1])
		}
	}
	take()
	t := time.NewTicker(sp.interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-end.C:
			return out
		case <-t.C:
			take()
		}
	}
}

// liveHeap is the heap marked live by the last garbage collection, in bytes.
func liveHeap() int64 {
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(m[0].Value.Uint64())
}

// growth returns the slope of ys over xs (seconds) in percent of the mean
// of ys per hour.
func growth(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	mean := sy / n
	if den == 0 || mean == 0 {
		return 0
	}
	slope := (n*sxy - sx*sy) / den // per second
	return slope * 3600 / mean * 100
}

func soakReport(samples []Sample) *Soak {
	xs := make([]float64, len(samples))
	n := len(samples)
	rss, heap, live, gor, fds := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	gom, other := make([]float64, n), make([]float64, n)
	for i, s := range samples {
		xs[i] = s.AtS
		rss[i], heap[i], live[i], gor[i], fds[i] = s.RSSMiB, s.HeapMiB, s.LiveHeapMiB, float64(s.Goroutines), float64(s.OpenFiles)
		gom[i], other[i] = s.GoMiB, s.AnonMiB-s.GoMiB
	}
	return &Soak{
		Samples: samples, RSSGrowthPctPerHour: growth(xs, rss), HeapGrowthPctPerHour: growth(xs, heap),
		LiveHeapGrowthPctPerHr: growth(xs, live),
		GoGrowthPctPerHr:       growth(xs, gom), OtherAnonGrowthPctPerHr: growth(xs, other),
		GoroutineGrowthPctPerHr: growth(xs, gor), OpenFileGrowthPctPerHr: growth(xs, fds),
	}
}

// Check returns an error naming every resource that grew faster than max
// percent per hour: the resident set, goroutines and open files. A nil
// Soak (no sampling) fails too: there is nothing to check.
func (s *Soak) Check(max float64) error {
	if s == nil || len(s.Samples) < 2 {
		return errors.New("soak: no samples to check (use --sample-every)")
	}
	var over []string
	for _, g := range []struct {
		name string
		v    float64
	}{
		{"resident set", s.RSSGrowthPctPerHour},
		{"goroutines", s.GoroutineGrowthPctPerHr},
		{"open files", s.OpenFileGrowthPctPerHr},
	} {
		if g.v > max {
			over = append(over, fmt.Sprintf("%s %+.2f %%/h", g.name, g.v))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("soak: growth over %.2g %%/h: %s", max, strings.Join(over, ", "))
	}
	return nil
}
