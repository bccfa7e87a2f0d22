package player

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultRangeColor is the fill of a highlight range that has no colour of
// its own and no timeline_ranges_fill.
const DefaultRangeColor = "#ffb300"

// maxColorLen bounds the text ParseColor reads.
const maxColorLen = 64

// ParseColor checks a CSS colour in one of the forms the player accepts,
// #RGB, #RRGGBB, #RRGGBBAA, rgb(r, g, b) or rgba(r, g, b, a) with r, g, b
// integers from 0 to 255 and a from 0 to 1, and returns it in canonical
// form: hex lower-cased, rgb()/rgba() without spaces. Anything else wraps
// ErrInvalidColor; the result is safe in any HTML, CSS or JS context.
func ParseColor(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxColorLen {
		return "", fmt.Errorf("%w: longer than %d characters", ErrInvalidColor, maxColorLen)
	}
	if strings.HasPrefix(s, "#") {
		hex := strings.ToLower(s[1:])
		if (len(hex) == 3 || len(hex) == 6 || len(hex) == 8) && allHex(hex) {
			return "#" + hex, nil
		}
		return "", fmt.Errorf("%w: %q is not #RGB, #RRGGBB or #RRGGBBAA", ErrInvalidColor, s)
	}
	lower := strings.ToLower(s)
	var name string
	switch {
	case strings.HasPrefix(lower, "rgba("):
		name = "rgba"
	case strings.HasPrefix(lower, "rgb("):
		name = "rgb"
	default:
		return "", fmt.Errorf("%w: %q is not a hex, rgb() or rgba() colour", ErrInvalidColor, s)
	}
	if !strings.HasSuffix(lower, ")") {
		return "", fmt.Errorf("%w: %q has no closing parenthesis", ErrInvalidColor, s)
	}
	parts := strings.Split(lower[len(name)+1:len(lower)-1], ",")
	want := 3
	if name == "rgba" {
		want = 4
	}
	if len(parts) != want {
		return "", fmt.Errorf("%w: %s() takes %d values", ErrInvalidColor, name, want)
	}
	out := make([]string, want)
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if i < 3 {
			v, err := strconv.Atoi(p)
			if err != nil || v < 0 || v > 255 || p != strconv.Itoa(v) {
				return "", fmt.Errorf("%w: %q is not an integer from 0 to 255", ErrInvalidColor, p)
			}
			out[i] = strconv.Itoa(v)
			continue
		}
		a, err := strconv.ParseFloat(p, 64)
		if err != nil || a < 0 || a > 1 || !isDecimal(p) {
			return "", fmt.Errorf("%w: alpha %q is not a number from 0 to 1", ErrInvalidColor, p)
		}
		out[i] = strconv.FormatFloat(a, 'f', -1, 64)
	}
	return name + "(" + strings.Join(out, ",") + ")", nil
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isDecimal reports whether s is digits with at most one dot (no sign, no
// exponent, no hex, no Inf or NaN).
func isDecimal(s string) bool {
	dot, digits := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot:
			dot = true
		case c >= '0' && c <= '9':
			digits++
		default:
			return false
		}
	}
	return digits > 0
}
