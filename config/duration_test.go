package config

import (
	"errors"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestDurationText(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		str     string
		wantErr bool
	}{
		{"seconds", "60s", time.Minute, "1m", false},
		{"mixed", "1m30s", 90 * time.Second, "1m30s", false},
		{"hours", "1h", time.Hour, "1h", false},
		{"hours and minutes", "1h30m", 90 * time.Minute, "1h30m", false},
		{"milliseconds", "500ms", 500 * time.Millisecond, "500ms", false},
		{"spaces", " 10s ", 10 * time.Second, "10s", false},
		{"zero", "0", 0, "0s", false},
		{"bad unit", "6x", 0, "", true},
		{"no unit", "60", 0, "", true},
		{"empty", "", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Duration
			err := d.UnmarshalText([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidDuration) {
					t.Fatalf("err = %v, want ErrInvalidDuration", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalText(%q): %v", tt.in, err)
			}
			if d.Duration() != tt.want {
				t.Errorf("got %v, want %v", d.Duration(), tt.want)
			}
			if d.String() != tt.str {
				t.Errorf("String() = %q, want %q", d.String(), tt.str)
			}
			var back Duration
			if err := back.UnmarshalText([]byte(d.String())); err != nil || back != d {
				t.Errorf("round trip of %q gave %v, %v", d.String(), back, err)
			}
		})
	}
}

func TestDurationYAML(t *testing.T) {
	var v struct {
		D Duration `yaml:"d"`
	}
	if err := yaml.Unmarshal([]byte("d: 1m30s"), &v); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if v.D.Duration() != 90*time.Second {
		t.Errorf("got %v, want 1m30s", v.D)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "d: 1m30s\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
	if err := yaml.Unmarshal([]byte("d: [1]"), &v); !errors.Is(err, ErrWrongShape) {
		t.Errorf("list into duration: err = %v, want ErrWrongShape", err)
	}
}
