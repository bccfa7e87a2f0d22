package segmenter

import "errors"

// Errors returned by the segmenter.
var (
	// ErrNoVideo is returned when a source has no H.264 or H.265 track.
	ErrNoVideo = errors.New("no H.264 or H.265 video track")

	// ErrNoParams is returned when a video track has no parameter sets yet.
	ErrNoParams = errors.New("video parameter sets not received yet")

	// ErrCorruptSpool is returned when a spool file cannot be recovered.
	ErrCorruptSpool = errors.New("spool file holds no complete fragment")

	// ErrClosed is returned by a closed component.
	ErrClosed = errors.New("closed")

	// ErrUploadRefused, wrapped by an error of SpoolConfig.Upload, says
	// that retrying cannot store the segment (storage refuses its key or
	// metadata): the spool drops it, reason "upload_failed".
	ErrUploadRefused = errors.New("segment refused by storage")
)
