package motion

import (
	"hash/fnv"
	"strconv"
	"time"
)

// EventType is the event type id of motion in the service interface.
const EventType = 5

// Event is one motion event of a camera.
type Event struct {
	// ID identifies the event (EventID); it is the same when the same
	// motion is detected again, so a republished event is deduplicated.
	ID string
	// Camera is the camera id.
	Camera string
	// Start is the media time of the first picture with confirmed motion.
	Start time.Time
	// End is the media time of the last one.
	End time.Time
	// Area is the largest share of the picture seen changing (0 to 1).
	Area float64
	// Image is a JPEG of the first picture with confirmed motion; nil when
	// it could not be made.
	Image []byte
}

// EventID returns the id of camera's motion event starting at start:
// "m{startMs}-{16 hex digits of the camera id's FNV-64a}", 31 characters
// at most, unique across cameras in practice, and a valid object name.
func EventID(camera string, start time.Time) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(camera))
	x := strconv.FormatUint(h.Sum64(), 16)
	for len(x) < 16 {
		x = "0" + x
	}
	return "m" + strconv.FormatInt(start.UnixMilli(), 10) + "-" + x
}
