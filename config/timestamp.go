package config

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Time is an instant written as RFC 3339 text ("2025-07-01T00:00:00Z") in
// YAML, environment variables and flags; empty text is the zero time.
type Time time.Time

// Time returns t as a time.Time.
func (t Time) Time() time.Time { return time.Time(t) }

// String returns t as RFC 3339 text, "" for the zero time.
func (t Time) String() string {
	if time.Time(t).IsZero() {
		return ""
	}
	return time.Time(t).Format(time.RFC3339)
}

// MarshalText implements encoding.TextMarshaler.
func (t Time) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Time) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	if s == "" {
		*t = Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("%w %q (want RFC 3339, e.g. 2025-07-01T00:00:00Z)", ErrInvalidValue, text)
	}
	*t = Time(v)
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (t Time) MarshalYAML() (any, error) { return t.String(), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (t *Time) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%w: want a time (line %d)", ErrWrongShape, n.Line)
	}
	return t.UnmarshalText([]byte(n.Value))
}
