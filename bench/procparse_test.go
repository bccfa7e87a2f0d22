package bench

import (
	"strings"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    int64
		wantErr bool
	}{
		{"plain", "1234 (ffmpeg) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 3 0 100 1000 200", 287, false},
		{"name with spaces and parens", "77 (a (b) c) R 1 77 77 0 -1 0 0 0 0 0 5 6 0 0", 11, false},
		{"no parenthesis", "1234 ffmpeg S 1", 0, true},
		{"too short", "1 (x) S 1 2 3", 0, true},
		{"not numbers", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 a b", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tc.stat))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ticks %d, want %d", got, tc.want)
			}
		})
	}
}

func FuzzParseStatCPU(f *testing.F) {
	f.Add("1234 (ffmpeg) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 3 0 100 1000 200")
	f.Add("77 (a (b) c) R 1 77 77 0 -1 0 0 0 0 0 5 6 0 0")
	f.Add(")")
	f.Fuzz(func(t *testing.T, s string) {
		if ticks, err := parseStatCPU([]byte(s)); err == nil && ticks < 0 && !strings.ContainsRune(s, '-') {
			t.Errorf("negative ticks %d from %q", ticks, s)
		}
	})
}

func TestParseVmRSS(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    int64
		ok      bool
		wantErr bool
	}{
		{"rss", "VmRSS:\t   53624 kB", 53624 << 10, true, false},
		{"other line", "VmHWM:\t   60000 kB", 0, false, false},
		{"no unit", "VmRSS:\t 12", 0, true, true},
		{"not a number", "VmRSS: x kB", 0, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := parseVmRSS(tc.line)
			if ok != tc.ok || (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseVmRSS(%q) = %d, %v, %v; want %d, %v, err %v", tc.line, got, ok, err, tc.want, tc.ok, tc.wantErr)
			}
		})
	}
}

func TestProcessAccountingOfSelf(t *testing.T) {
	cpu, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if cpu <= 0 {
		t.Errorf("self CPU %v, want more than 0 after starting a test binary", cpu)
	}
	rss, err := procRSS(0)
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 {
		t.Errorf("self RSS %d", rss)
	}
}

func TestParseProcStatBusy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		busy int64
		ok   bool
	}{
		{"cpu  100 5 50 1000 20 3 7 40 9 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n", 165, true},
		{"cpu  1 2 3 4 5 6 7 8\n", 19, true},
		{"cpu0 1 2 3 4 5 6 7 8\n", 0, false},
		{"cpu  1 2 x 4 5 6 7 8\n", 0, false},
		{"cpu  1 2 3\n", 0, false},
		{"", 0, false},
	} {
		busy, err := parseProcStatBusy([]byte(tc.in))
		if (err == nil) != tc.ok || busy != tc.busy {
			t.Errorf("%q: %d, %v; want %d, ok %v", tc.in, busy, err, tc.busy, tc.ok)
		}
	}
}

func FuzzParseProcStatBusy(f *testing.F) {
	f.Add([]byte("cpu  100 5 50 1000 20 3 7 40 9 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if busy, err := parseProcStatBusy(b); err == nil && busy < 0 {
			t.Fatalf("negative busy time %d", busy)
		}
	})
}
