package retention

import (
	"strconv"
	"time"
)

// Day-boundary rounding. An object whose time is t belongs to the UTC hour
// [h, h+1h) holding t. It is deleted once that whole hour is older than the
// camera's retention: h+1h <= now - days*24h. So an object is kept at least
// days*24h and at most one hour more (plus the time to the next sweep).
// Folders of whole years, months, days and hours are deleted as one prefix
// once their end is past the cutoff.

// Cutoff returns the moment before which a camera with days of retention
// keeps nothing: now - days*24h.
func Cutoff(now time.Time, days int) time.Time {
	return now.Add(-time.Duration(days) * 24 * time.Hour)
}

// Expired reports whether an object of time t is past retention at cutoff,
// by the hour rule above.
func Expired(t, cutoff time.Time) bool {
	return !t.UTC().Truncate(time.Hour).Add(time.Hour).After(cutoff)
}

// level is one folder level of a dated key path.
type level int

const (
	levelYear level = iota
	levelMonth
	levelDay
	levelHour
)

// span returns the UTC interval [from, to) of the folder name at level l
// below parent (the start of the parent folder), and whether the name is a
// well-formed folder of that level.
func span(l level, parent time.Time, name string) (from, to time.Time, ok bool) {
	width := 2
	if l == levelYear {
		width = 4
	}
	if len(name) != width {
		return time.Time{}, time.Time{}, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return time.Time{}, time.Time{}, false
		}
	}
	n, _ := strconv.Atoi(name)
	switch l {
	case levelYear:
		if n < 1970 {
			return time.Time{}, time.Time{}, false
		}
		from = time.Date(n, 1, 1, 0, 0, 0, 0, time.UTC)
		return from, from.AddDate(1, 0, 0), true
	case levelMonth:
		if n < 1 || n > 12 {
			return time.Time{}, time.Time{}, false
		}
		from = time.Date(parent.Year(), time.Month(n), 1, 0, 0, 0, 0, time.UTC)
		return from, from.AddDate(0, 1, 0), true
	case levelDay:
		from = time.Date(parent.Year(), parent.Month(), n, 0, 0, 0, 0, time.UTC)
		if n < 1 || from.Month() != parent.Month() {
			return time.Time{}, time.Time{}, false
		}
		return from, from.AddDate(0, 0, 1), true
	default:
		if n > 23 {
			return time.Time{}, time.Time{}, false
		}
		from = parent.Add(time.Duration(n) * time.Hour)
		return from, from.Add(time.Hour), true
	}
}
