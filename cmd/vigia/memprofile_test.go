package main

import (
	"os"
	"runtime"
	"testing"
)

func TestMemoryProfilerOff(t *testing.T) {
	if godebugSets(os.Getenv("GODEBUG"), "memprofilerate") {
		t.Skip("GODEBUG sets memprofilerate")
	}
	if runtime.MemProfileRate != 0 {
		t.Fatalf("MemProfileRate = %d, want 0 (the memory profiler off)", runtime.MemProfileRate)
	}
}

func TestGodebugSets(t *testing.T) {
	tests := []struct {
		godebug string
		want    bool
	}{
		{"", false},
		{"memprofilerate=1", true},
		{"gctrace=1,memprofilerate=4096", true},
		{"gctrace=1, memprofilerate=0", true},
		{"memprofilerate", false},
		{"xmemprofilerate=1", false},
		{"gctrace=1", false},
	}
	for _, tc := range tests {
		if got := godebugSets(tc.godebug, "memprofilerate"); got != tc.want {
			t.Errorf("godebugSets(%q) = %v, want %v", tc.godebug, got, tc.want)
		}
	}
}
