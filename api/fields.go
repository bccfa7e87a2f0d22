package api

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fieldErrors maps each invalid field to its messages.
type fieldErrors map[string][]string

func (f fieldErrors) add(field, msg string) {
	f[field] = append(f[field], msg)
}

// err returns the 422 error, or nil when there is none.
func (f fieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	sort.Strings(names)
	return &apiError{status: http.StatusUnprocessableEntity, msg: "invalid fields: " + strings.Join(names, ", "), fields: f}
}

// fields reads typed values from an input map, recording problems.
type fields struct {
	in     map[string]any
	prefix string // "users.0." for nested objects
	errs   fieldErrors
}

func newFields(in map[string]any, errs fieldErrors) *fields {
	return &fields{in: in, errs: errs}
}

func (f *fields) name(k string) string { return f.prefix + k }

// present reports whether k was given with a non-empty value.
func (f *fields) present(k string) bool {
	v, ok := f.in[k]
	if !ok || v == nil {
		return false
	}
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return false
	}
	return true
}

// str returns k as a trimmed string; numbers are accepted as their text.
// required records a missing value; max bounds the length in characters.
// Invalid UTF-8 and NUL characters are refused.
func (f *fields) str(k string, required bool, max int) string {
	if !f.present(k) {
		if required {
			f.errs.add(f.name(k), "is required")
		}
		return ""
	}
	var s string
	switch v := f.in[k].(type) {
	case string:
		s = strings.TrimSpace(v)
	case json.Number:
		s = v.String()
	default:
		f.errs.add(f.name(k), "must be a string")
		return ""
	}
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		// PostgreSQL text holds neither; SQLite would return them altered.
		f.errs.add(f.name(k), "must be UTF-8 text without NUL characters")
		return ""
	}
	if max > 0 && len([]rune(s)) > max {
		f.errs.add(f.name(k), "must be at most "+strconv.Itoa(max)+" characters")
		return ""
	}
	return s
}

// rawStr returns k as a string without trimming (passwords).
func (f *fields) rawStr(k string, required bool, max int) string {
	v, ok := f.in[k].(string)
	if !ok || v == "" {
		if f.present(k) {
			f.errs.add(f.name(k), "must be a string")
		} else if required {
			f.errs.add(f.name(k), "is required")
		}
		return ""
	}
	if len(v) > max {
		f.errs.add(f.name(k), "must be at most "+strconv.Itoa(max)+" characters")
		return ""
	}
	return v
}

// integer returns k as an integer; numeric strings are accepted. ok is
// false when k is missing or invalid.
func (f *fields) integer(k string, required bool) (n int64, ok bool) {
	if !f.present(k) {
		if required {
			f.errs.add(f.name(k), "is required")
		}
		return 0, false
	}
	var err error
	switch v := f.in[k].(type) {
	case json.Number:
		n, err = v.Int64()
		if err != nil {
			var fl float64
			fl, err = v.Float64()
			if err == nil && fl == math.Trunc(fl) && math.Abs(fl) < 1<<53 {
				n, err = int64(fl), nil
			} else if err == nil {
				err = strconv.ErrRange // a fraction, or past what a float holds exactly
			}
		}
	case string:
		n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	case bool:
		n, err = 0, strconv.ErrSyntax
	default:
		err = strconv.ErrSyntax
	}
	if err != nil {
		f.errs.add(f.name(k), "must be an integer")
		return 0, false
	}
	return n, true
}

// minMillis is 2001-01-01T00:00:00Z in Unix milliseconds. A millisecond
// field below it (and not negative) was given in seconds: 1741620600 is
// March 2025 in seconds and January 1970 in milliseconds.
const minMillis = 978307200000

// msgSeconds answers a millisecond field given seconds.
const msgSeconds = "looks like seconds; this field takes Unix milliseconds"

// millis returns k as Unix milliseconds: an integer from 2001 on. A
// negative value, or one before 2001 (seconds, most likely), is recorded
// as an error of k and ok is false.
func (f *fields) millis(k string, required bool) (n int64, ok bool) {
	n, ok = f.integer(k, required)
	switch {
	case !ok:
		return 0, false
	case n < 0:
		f.errs.add(f.name(k), "must be Unix milliseconds")
		return 0, false
	case n < minMillis:
		f.errs.add(f.name(k), msgSeconds)
		return 0, false
	}
	return n, true
}

// oneOf returns k as an integer that must be one of allowed.
func (f *fields) oneOf(k string, required bool, allowed []int) (int, bool) {
	n, ok := f.integer(k, required)
	if !ok {
		return 0, false
	}
	for _, a := range allowed {
		if int64(a) == n {
			return a, true
		}
	}
	f.errs.add(f.name(k), "must be one of "+joinInts(allowed))
	return 0, false
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// queryInt parses an optional integer query parameter; a bad value is 422.
func queryInt(in map[string]any, k string, def int64) (int64, error) {
	errs := fieldErrors{}
	n, ok := newFields(in, errs).integer(k, false)
	if err := errs.err(); err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	return n, nil
}

// pathID parses the integer path value name; anything else is 400. The
// path value is then replaced by the canonical decimal form of the id
// ("01" and "+1" become "1"), so that whatever reads it later (a handler
// of another package, a storage prefix) sees the id that was checked.
func pathID(r *http.Request, name string) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || n < 1 {
		return 0, fail(http.StatusBadRequest, name+" in the path must be a positive integer")
	}
	r.SetPathValue(name, strconv.FormatInt(n, 10))
	return n, nil
}
