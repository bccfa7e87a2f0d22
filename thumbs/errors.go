package thumbs

import (
	"errors"

	"github.com/vigia/vigia/thumbs/decoder"
)

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrUnavailable means this build cannot decode video (no cgo).
	ErrUnavailable = decoder.ErrUnavailable

	// ErrNoKeyframe means the camera is not recorded here or has not sent a
	// keyframe yet.
	ErrNoKeyframe = errors.New("no keyframe received for the camera")

	// ErrNoFrame means the segment holds no video frame at or before the
	// requested time.
	ErrNoFrame = errors.New("no frame at the requested time")

	// ErrBadSegment means a recording segment could not be read as fMP4.
	ErrBadSegment = errors.New("unreadable segment")

	// ErrClosed means the Service was closed.
	ErrClosed = errors.New("thumbnails closed")
)
