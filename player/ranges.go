package player

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Limits on highlight ranges.
const (
	// MaxRanges is the most highlight ranges a page takes, from all parameters.
	MaxRanges = 500
	// maxRangesBytes bounds the timeline_ranges text.
	maxRangesBytes = 64 << 10
	// maxTimestampMs is the last millisecond of the year 9999.
	maxTimestampMs = 253402300799999
)

// Range is one highlight range of the timeline.
type Range struct {
	// StartMs and EndMs bound the range, Unix milliseconds.
	StartMs int64 `json:"startMs"`
	EndMs   int64 `json:"endMs"`
	// Color is the range's fill, already chosen by the colour priority and
	// in the canonical form of ParseColor.
	Color string `json:"color"`
}

// ParseTimelineRanges reads timeline_ranges: a JSON array of objects, each
// with start_ts and end_ts or ini and end (Unix milliseconds, as numbers or
// decimal strings) and an optional colour in fill or color (fill wins).
// A range without a colour gets fallback. Ranges must not end before they
// start. Errors wrap ErrInvalidRanges or ErrInvalidColor and name the item.
func ParseTimelineRanges(s, fallback string) ([]Range, error) {
	if len(s) > maxRangesBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidRanges, maxRangesBytes)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var items []map[string]any
	if err := dec.Decode(&items); err != nil {
		return nil, fmt.Errorf("%w: not a JSON array of objects: %w", ErrInvalidRanges, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: text after the JSON array", ErrInvalidRanges)
	}
	if len(items) > MaxRanges {
		return nil, fmt.Errorf("%w: %d ranges, more than %d", ErrInvalidRanges, len(items), MaxRanges)
	}
	out := make([]Range, 0, len(items))
	for i, it := range items {
		r, err := parseRangeItem(it, fallback)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// parseRangeItem reads one item of timeline_ranges.
func parseRangeItem(it map[string]any, fallback string) (Range, error) {
	if it == nil {
		return Range{}, fmt.Errorf("%w: null item", ErrInvalidRanges)
	}
	startKey, endKey := "start_ts", "end_ts"
	if _, ok := it[startKey]; !ok {
		startKey, endKey = "ini", "end"
	}
	start, err := rangeTimestamp(it, startKey)
	if err != nil {
		return Range{}, err
	}
	end, err := rangeTimestamp(it, endKey)
	if err != nil {
		return Range{}, err
	}
	if end < start {
		return Range{}, fmt.Errorf("%w: %s %d is before %s %d", ErrInvalidRanges, endKey, end, startKey, start)
	}
	color := fallback
	for _, k := range []string{"fill", "color"} {
		v, ok := it[k]
		if !ok || v == nil {
			continue
		}
		str, isStr := v.(string)
		if !isStr {
			return Range{}, fmt.Errorf("%w: %s is not a string", ErrInvalidColor, k)
		}
		if strings.TrimSpace(str) == "" {
			continue
		}
		c, err := ParseColor(str)
		if err != nil {
			return Range{}, fmt.Errorf("%s: %w", k, err)
		}
		color = c
		break
	}
	return Range{StartMs: start, EndMs: end, Color: color}, nil
}

// rangeTimestamp reads a millisecond timestamp given as a JSON number or a
// decimal string.
func rangeTimestamp(it map[string]any, key string) (int64, error) {
	v, ok := it[key]
	if !ok {
		return 0, fmt.Errorf("%w: needs start_ts and end_ts, or ini and end; %s is missing", ErrInvalidRanges, key)
	}
	var text string
	switch x := v.(type) {
	case json.Number:
		text = x.String()
	case string:
		text = strings.TrimSpace(x)
	default:
		return 0, fmt.Errorf("%w: %s is not a number", ErrInvalidRanges, key)
	}
	ms, err := parseMillis(text)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrInvalidRanges, key, err)
	}
	return ms, nil
}

// parseMillis reads a non-negative integer of milliseconds up to the year
// 9999. A JSON number with a zero fraction ("1700000000000.0") is accepted.
func parseMillis(s string) (int64, error) {
	if i := strings.IndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		s = s[:i]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > maxTimestampMs || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a Unix time in milliseconds", s)
	}
	return v, nil
}
