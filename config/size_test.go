package config

import (
	"errors"
	"math"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		str     string
		wantErr bool
	}{
		{"bytes", "1048576", 1 << 20, "1MiB", false},
		{"odd bytes", "1000001", 1000001, "1000001", false},
		{"byte unit", "512B", 512, "512", false},
		{"kibibytes", "512KiB", 512 << 10, "512KiB", false},
		{"gibibytes", "2GiB", 2 << 30, "2GiB", false},
		{"tebibytes", "1TiB", 1 << 40, "1TiB", false},
		{"megabytes", "10MB", 10_000_000, "10MB", false},
		{"gigabytes", "3GB", 3_000_000_000, "3GB", false},
		{"lower case", "2gib", 2 << 30, "2GiB", false},
		{"k8s style", "512Mi", 512 << 20, "512MiB", false},
		{"single letter", "10M", 10_000_000, "10MB", false},
		{"space before unit", "2 GiB", 2 << 30, "2GiB", false},
		{"fraction", "1.5GiB", 3 << 29, "1536MiB", false},
		{"zero", "0", 0, "0", false},
		{"max", "9223372036854775807", math.MaxInt64, "9223372036854775807", false},
		{"unknown unit", "2QB", 0, "", true},
		{"negative", "-1GiB", 0, "", true},
		{"empty", "", 0, "", true},
		{"unit only", "GiB", 0, "", true},
		{"fraction of a byte", "1.5", 0, "", true},
		{"overflow", "9000000TiB", 0, "", true},
		{"fraction overflow", "9000000.5TiB", 0, "", true},
		{"two dots", "1.2.3MiB", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidSize) {
					t.Fatalf("ParseSize(%q) = %d, %v; want ErrInvalidSize", tt.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSize(%q): %v", tt.in, err)
			}
			if got.Bytes() != tt.want {
				t.Errorf("ParseSize(%q) = %d, want %d", tt.in, got.Bytes(), tt.want)
			}
			if got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
			back, err := ParseSize(got.String())
			if err != nil || back != got {
				t.Errorf("round trip of %q gave %d, %v", got.String(), back, err)
			}
		})
	}
}

func TestSizeYAML(t *testing.T) {
	var v struct {
		S Size `yaml:"s"`
	}
	if err := yaml.Unmarshal([]byte("s: 2GiB"), &v); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if v.S != 2<<30 {
		t.Errorf("got %d, want 2GiB", v.S)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "s: 2GiB\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
	if err := yaml.Unmarshal([]byte("s: lots"), &v); !errors.Is(err, ErrInvalidSize) {
		t.Errorf("err = %v, want ErrInvalidSize", err)
	}
}

// FuzzParseSize checks that ParseSize never panics and that every size it
// accepts prints as text that parses back to the same size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1048576", "2GiB", "10MB", "1.5GiB", "512mi", "-1", "9000000TiB", " 2 GiB "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSize(text)
		if err != nil {
			return
		}
		if s < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", text, s)
		}
		back, err := ParseSize(s.String())
		if err != nil || back != s {
			t.Fatalf("ParseSize(%q) = %d prints %q which parses to %d, %v", text, s, s.String(), back, err)
		}
	})
}
