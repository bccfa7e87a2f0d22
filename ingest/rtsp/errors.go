package rtsp

import "errors"

// Errors returned by the RTSP source.
var (
	// ErrRedirectHost is returned when a camera whose URL carries
	// credentials redirects to another host: the credentials would be sent
	// to it, so the redirect is not followed.
	ErrRedirectHost = errors.New("redirect to another host refused: the url carries credentials")

	// ErrTooManyRedirects is returned after maxRedirects redirects in one
	// connection attempt.
	ErrTooManyRedirects = errors.New("too many redirects")

	// ErrInvalidUnit is reported (as a decode error) for an access unit
	// that breaks the codec's syntax rules: garbage, not video.
	ErrInvalidUnit = errors.New("access unit is not valid video")
)
