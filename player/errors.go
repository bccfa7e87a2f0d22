package player

import "errors"

// Errors returned by the player.
var (
	// ErrInvalidQuery is wrapped by the *QueryError of ParseQuery.
	ErrInvalidQuery = errors.New("invalid player query")

	// ErrInvalidColor is returned for a colour that is not #RGB, #RRGGBB,
	// #RRGGBBAA, rgb(r,g,b) or rgba(r,g,b,a).
	ErrInvalidColor = errors.New("invalid colour")

	// ErrInvalidRanges is returned for a timeline_ranges value that is not a
	// JSON array of ranges.
	ErrInvalidRanges = errors.New("invalid timeline ranges")
)

// errNoSegments is returned by the playlist writer when no usable segment
// overlaps the range; the VOD handler answers 404.
var errNoSegments = errors.New("no recorded segments in range")
