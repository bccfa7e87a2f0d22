package player

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Query holds the player parameters of the "Get camera player" operation,
// parsed and validated. Authentication parameters (token, player_digest)
// are the API's and are not read here.
type Query struct {
	// Footer shows the timeline (footer=1, the default); footer=0 hides it.
	Footer bool
	// Controls shows the controls (controls=1, the default); controls=0 hides them.
	Controls bool
	// TS is where recorded playback starts, Unix seconds; 0 means live.
	TS int64
	// Delay is how many seconds before TS playback starts.
	Delay int64
	// Window is the span of the timeline: 10 minutes, 1 hour or 24 hours
	// (timeline_interval 10, 1 or 24). It defaults to 24 hours.
	Window time.Duration
	// Speed is the playback rate: 0.5, 1, 2, 4, 8 or 16. It defaults to 1.
	Speed float64
	// HideFooter removes the padding below the video.
	HideFooter bool
	// HideHeader removes the padding above the video.
	HideHeader bool
	// FixFullScreen removes the outer paddings.
	FixFullScreen bool
	// Ranges are the highlight ranges, in the order given: timeline_ranges,
	// then start_ts/end_ts, then start_timestamps[]/end_timestamps[].
	Ranges []Range
	// RangesFill is timeline_ranges_fill in canonical form, or "".
	RangesFill string
}

// StartTime returns where recorded playback starts (TS minus Delay), and
// false in live mode.
func (q Query) StartTime() (time.Time, bool) {
	if q.TS == 0 {
		return time.Time{}, false
	}
	return time.Unix(q.TS-q.Delay, 0), true
}

// Limits of the query parameters.
const (
	// maxTS is the last second of the year 9999.
	maxTS = 253402300799
	// MaxDelay is the largest delay, in seconds: 30 days.
	MaxDelay = 30 * 24 * 3600
)

// Speeds are the playback rates the player offers.
var speeds = []float64{0.5, 1, 2, 4, 8, 16}

// Speeds returns the playback rates the player offers.
func Speeds() []float64 { return append([]float64(nil), speeds...) }

// FieldError names one invalid parameter.
type FieldError struct {
	// Field is the parameter name, e.g. "timeline_interval" or "timeline_ranges".
	Field string `json:"field"`
	// Message says what is wrong with it.
	Message string `json:"message"`
}

// QueryError lists every invalid parameter of a player query. It wraps
// ErrInvalidQuery.
type QueryError struct {
	// Fields are the invalid parameters, in the order they were checked.
	Fields []FieldError
}

// Error lists the fields.
func (e *QueryError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return ErrInvalidQuery.Error() + ": " + strings.Join(parts, "; ")
}

// Unwrap returns ErrInvalidQuery.
func (e *QueryError) Unwrap() error { return ErrInvalidQuery }

// ParseQuery reads the player parameters of a request's query. Every
// invalid parameter is reported in one *QueryError (errors.As), each named
// by its parameter.
//
// Booleans take 0/1 or false/true. start_timestamps[] and end_timestamps[]
// are also read without the brackets, and pair by index.
func ParseQuery(q url.Values) (Query, error) {
	p := queryParser{q: q}
	out := Query{
		Footer:        p.boolean("footer", true),
		Controls:      p.boolean("controls", true),
		TS:            p.integer("ts", 0, maxTS),
		Delay:         p.integer("delay", 0, MaxDelay),
		Window:        p.window(),
		Speed:         p.speed(),
		HideFooter:    p.boolean("hideFooter", false),
		HideHeader:    p.boolean("hideHeader", false),
		FixFullScreen: p.boolean("fixFullScreen", false),
	}
	fill := DefaultRangeColor
	if v := strings.TrimSpace(q.Get("timeline_ranges_fill")); v != "" {
		c, err := ParseColor(v)
		if err != nil {
			p.fail("timeline_ranges_fill", err)
		} else {
			out.RangesFill, fill = c, c
		}
	}
	if v := strings.TrimSpace(q.Get("timeline_ranges")); v != "" {
		rs, err := ParseTimelineRanges(v, fill)
		if err != nil {
			p.fail("timeline_ranges", err)
		}
		out.Ranges = append(out.Ranges, rs...)
	}
	if q.Has("start_ts") || q.Has("end_ts") {
		start := p.millis("start_ts", q.Get("start_ts"))
		end := p.millis("end_ts", q.Get("end_ts"))
		if start >= 0 && end >= 0 {
			if end < start {
				p.failf("end_ts", "%d is before start_ts %d", end, start)
			} else {
				out.Ranges = append(out.Ranges, Range{StartMs: start, EndMs: end, Color: fill})
			}
		}
	}
	starts, ends := listParam(q, "start_timestamps"), listParam(q, "end_timestamps")
	if len(starts) != len(ends) {
		p.failf("end_timestamps[]", "%d values for %d start_timestamps[]", len(ends), len(starts))
	} else {
		for i := range starts {
			sf, ef := fmt.Sprintf("start_timestamps[%d]", i), fmt.Sprintf("end_timestamps[%d]", i)
			start, end := p.millis(sf, starts[i]), p.millis(ef, ends[i])
			if start < 0 || end < 0 {
				continue
			}
			if end < start {
				p.failf(ef, "%d is before %s %d", end, sf, start)
				continue
			}
			out.Ranges = append(out.Ranges, Range{StartMs: start, EndMs: end, Color: fill})
		}
	}
	if len(out.Ranges) > MaxRanges {
		p.failf("timeline_ranges", "%d highlight ranges in all, more than %d", len(out.Ranges), MaxRanges)
	}
	if len(p.errs) > 0 {
		return Query{}, &QueryError{Fields: p.errs}
	}
	return out, nil
}

// queryParser collects the errors of ParseQuery.
type queryParser struct {
	q    url.Values
	errs []FieldError
}

func (p *queryParser) fail(field string, err error) {
	p.errs = append(p.errs, FieldError{Field: field, Message: err.Error()})
}

func (p *queryParser) failf(field, format string, args ...any) {
	p.errs = append(p.errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// boolean reads 0/1/false/true; absent or empty gives def.
func (p *queryParser) boolean(name string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(p.q.Get(name))) {
	case "":
		return def
	case "1", "true":
		return true
	case "0", "false":
		return false
	}
	p.failf(name, "must be 0, 1, false or true")
	return def
}

// integer reads a decimal integer in [lo, hi]; absent or empty gives 0.
func (p *queryParser) integer(name string, lo, hi int64) int64 {
	v := strings.TrimSpace(p.q.Get(name))
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi || strings.HasPrefix(v, "+") {
		p.failf(name, "must be an integer from %d to %d", lo, hi)
		return 0
	}
	return n
}

// millis reads a timestamp in milliseconds; it returns -1 after an error.
func (p *queryParser) millis(name, v string) int64 {
	ms, err := parseMillis(strings.TrimSpace(v))
	if err != nil {
		p.fail(name, err)
		return -1
	}
	return ms
}

func (p *queryParser) window() time.Duration {
	switch strings.TrimSpace(p.q.Get("timeline_interval")) {
	case "", "24":
		return 24 * time.Hour
	case "1":
		return time.Hour
	case "10":
		return 10 * time.Minute
	}
	p.failf("timeline_interval", "must be 10 (minutes), 1 or 24 (hours)")
	return 24 * time.Hour
}

func (p *queryParser) speed() float64 {
	v := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(p.q.Get("video_speed"))), "x")
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err == nil {
		for _, s := range speeds {
			if f == s && isDecimal(v) {
				return s
			}
		}
	}
	p.failf("video_speed", "must be one of 0.5, 1, 2, 4, 8, 16")
	return 1
}

// listParam returns the values of name[] and name.
func listParam(q url.Values, name string) []string {
	return append(append([]string(nil), q[name+"[]"]...), q[name]...)
}

// AsQueryError returns the *QueryError in err's chain, if any.
func AsQueryError(err error) (*QueryError, bool) {
	var qe *QueryError
	ok := errors.As(err, &qe)
	return qe, ok
}
