package export

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrNoRecordings means no recording of the camera overlaps the range.
	ErrNoRecordings = errors.New("no recordings in the range")

	// ErrRange means the range is empty, reversed or longer than allowed.
	ErrRange = errors.New("invalid export range")

	// ErrBadSegment means a stored segment could not be parsed.
	ErrBadSegment = errors.New("unreadable segment")

	// ErrInvalidJob means a job message or state is malformed.
	ErrInvalidJob = errors.New("invalid export job")

	// ErrJobExists means a job with that id was already submitted.
	ErrJobExists = errors.New("export job exists")

	// ErrJobNotFound means no job has that id.
	ErrJobNotFound = errors.New("export job not found")

	// ErrNoTranscoder means an H.264 video was asked of recordings in
	// H.265 and this node cannot transcode (a build without cgo).
	ErrNoTranscoder = errors.New("this node cannot transcode to H.264")

	// ErrRemoved means the job was removed while it ran.
	ErrRemoved = errors.New("export job removed")
)
