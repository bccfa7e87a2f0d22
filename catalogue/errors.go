package catalogue

import "errors"

// Errors returned by the catalogue.
var (
	// ErrNoRecording means no stored segment covers the time asked for.
	ErrNoRecording = errors.New("no recording at that time")

	// ErrInvalidRange means a camera id or a time range that cannot be
	// listed (an invalid camera id, a range that ends before it starts,
	// times outside the years 1970 to 9999).
	ErrInvalidRange = errors.New("invalid camera or time range")
)
