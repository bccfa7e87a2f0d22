package api

import "strconv"

// maxEventKeepDays bounds a camera's event_keep_days.
const maxEventKeepDays = 3650

// parseEventKeep reads the optional event_keep_days of a camera: the days
// its video around events is kept when longer than history_days
// (docs/retention.md); 0 leaves it to retention.event_keep_days.
func parseEventKeep(in map[string]any, errs fieldErrors) (days int, set bool) {
	n, ok := newFields(in, errs).integer("event_keep_days", false)
	if !ok {
		return 0, false
	}
	if n < 0 || n > maxEventKeepDays {
		errs.add("event_keep_days", "must be between 0 and "+strconv.Itoa(maxEventKeepDays))
		return 0, false
	}
	return int(n), true
}
