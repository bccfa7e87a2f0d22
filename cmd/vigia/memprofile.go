package main

import (
	"os"
	"runtime"
	"strings"
)

// The Go runtime samples allocations for heap profiles from the start
// (runtime.MemProfileRate: one sample per 512 KiB allocated) in every binary
// that links runtime/pprof, as this one does for `vigia bench`. What it
// records is never freed: a hash table of 1.4 MiB whose pages become resident
// as records land in them, and one record per allocation stack and size
// seen. A recorder allocates new sizes all day (segments, keyframes,
// thumbnails), so the records kept growing: in a soak of 100 cameras the
// table and its records took 0.7 MiB more in 20 minutes, most of what the
// resident set grew by (docs/benchmarks.md, Soak). Vigia runs with the
// profiler off; GODEBUG=memprofilerate=N turns it on, and
// `vigia bench --memprofile` turns it on for its run.
func init() {
	if !godebugSets(os.Getenv("GODEBUG"), "memprofilerate") {
		runtime.MemProfileRate = 0
	}
}

// godebugSets reports whether the GODEBUG value godebug sets key.
func godebugSets(godebug, key string) bool {
	for _, kv := range strings.Split(godebug, ",") {
		if k, _, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == key {
			return true
		}
	}
	return false
}
