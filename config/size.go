package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Size is a number of bytes written as an integer with an optional unit:
// "1048576", "512KiB", "2GiB", "10MB". Binary units (KiB, MiB, GiB, TiB) are
// powers of 1024, decimal units (KB, MB, GB, TB) powers of 1000; units are
// case-insensitive, the trailing "B" is optional ("512Mi", "10M") and a
// bare "B" means bytes. A fraction is allowed with a unit
// ("1.5GiB").
type Size int64

type sizeUnit struct {
	name string
	mult int64
}

// sizeUnits are ordered largest first within each family; formatting picks
// the first that divides exactly.
var sizeUnits = []sizeUnit{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
}

// sizeMultipliers maps a lower-cased unit without its trailing "b" to its
// multiplier; k8s-style "Mi" and single letters are accepted too.
var sizeMultipliers = map[string]int64{
	"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
	"ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40,
}

// ParseSize parses size text; see Size.
func ParseSize(text string) (Size, error) {
	s := strings.TrimSpace(text)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	mult, ok := sizeMultipliers[strings.TrimSuffix(strings.ToLower(unit), "b")]
	if !ok || num == "" {
		return 0, fmt.Errorf("%w %q", ErrInvalidSize, text)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("%w %q", ErrInvalidSize, text)
		}
		return Size(n * mult), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 1 || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("%w %q", ErrInvalidSize, text)
	}
	return Size(f * float64(mult)), nil
}

// Bytes returns s as a number of bytes.
func (s Size) Bytes() int64 { return int64(s) }

// String returns s with the largest unit that divides it exactly, binary
// units first ("2GiB", "10MB", "1000001").
func (s Size) String() string {
	if s != 0 {
		for _, u := range sizeUnits {
			if int64(s)%u.mult == 0 {
				return strconv.FormatInt(int64(s)/u.mult, 10) + u.name
			}
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MarshalText implements encoding.TextMarshaler.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Size) UnmarshalText(text []byte) error {
	v, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%w: want a size (line %d)", ErrWrongShape, n.Line)
	}
	return s.UnmarshalText([]byte(n.Value))
}
