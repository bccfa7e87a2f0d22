package player

import (
	"errors"
	"strings"
	"testing"
)

func TestParseColor(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"#FFF", "#fff"},
		{"#00ff00", "#00ff00"},
		{" #11223344 ", "#11223344"},
		{"rgb(1, 2, 3)", "rgb(1,2,3)"},
		{"RGB(255,255,0)", "rgb(255,255,0)"},
		{"rgba(0, 0, 255, 0.5)", "rgba(0,0,255,0.5)"},
		{"rgba(0,0,0,1)", "rgba(0,0,0,1)"},
		{"rgba(0,0,0,.25)", "rgba(0,0,0,0.25)"},
	}
	for _, tt := range tests {
		got, err := ParseColor(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseColor(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	bad := []string{
		"", "red", "#ff", "#ffff", "#fffff", "#ggg", "#1234567", "#123456789",
		"rgb(1,2)", "rgb(1,2,3,4)", "rgba(1,2,3)", "rgb(256,0,0)", "rgb(-1,0,0)", "rgb(01,0,0)",
		"rgb(1.5,0,0)", "rgba(0,0,0,2)", "rgba(0,0,0,-0.1)", "rgba(0,0,0,1e0)", "rgba(0,0,0,NaN)",
		"rgb(1,2,3", "rgb(1,2,3);background:url(x)", "#fff;x", "rgb(1,2,3)</style>",
		"rgb(" + strings.Repeat("1", 80) + ")", "hsl(0,0%,0%)", "expression(alert(1))",
	}
	for _, in := range bad {
		if got, err := ParseColor(in); !errors.Is(err, ErrInvalidColor) {
			t.Errorf("ParseColor(%q) = %q, %v; want ErrInvalidColor", in, got, err)
		}
	}
}

// FuzzParseColor checks that an accepted colour is made only of the
// characters of its forms and parses back to itself.
func FuzzParseColor(f *testing.F) {
	for _, s := range []string{"#fff", "#11223344", "rgb(1, 2, 3)", "rgba(0,0,255,0.5)", "rgb(1,2,3);x", "#ggg"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseColor(s)
		if err != nil {
			return
		}
		if strings.Trim(c, "#0123456789abcdefgr(),.") != "" {
			t.Fatalf("ParseColor(%q) = %q has other characters", s, c)
		}
		if again, err := ParseColor(c); err != nil || again != c {
			t.Fatalf("ParseColor(%q) = %q, but that parses to %q, %v", s, c, again, err)
		}
	})
}
