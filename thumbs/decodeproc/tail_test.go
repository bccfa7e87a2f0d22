package decodeproc

import (
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
		oom    bool
	}{
		{"short", []string{"ab", "cd"}, "abcd", false},
		{"kept to the end", []string{"0123456789", "abcdefghij"}, "456789abcdefghij", false},
		{"one large write", []string{strings.Repeat("x", 30) + "end"}, strings.Repeat("x", 13) + "end", false},
		{"oom in one write", []string{"fatal error: runtime: out of memory\n"}, "", true},
		{"oom across writes", []string{"fatal error: runtime: out of ", "memory"}, "", true},
		{"oom pushed out of the tail", []string{"out of memory", strings.Repeat("x", 40)}, strings.Repeat("x", 16), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTail(16)
			for _, w := range tc.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("write: %d %v", n, err)
				}
			}
			if tc.want != "" && tl.String() != tc.want {
				t.Fatalf("kept %q, want %q", tl.String(), tc.want)
			}
			if tl.outOfMemory() != tc.oom {
				t.Fatalf("out of memory %v, want %v", tl.outOfMemory(), tc.oom)
			}
		})
	}
}
