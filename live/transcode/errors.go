package transcode

import "errors"

var (
	// ErrUnavailable is returned by New in a build without libavcodec.
	ErrUnavailable = errors.New("transcode: this build has no libavcodec (cgo disabled)")

	// ErrCodec is returned by New for an input codec other than H.265 or
	// H.264, or when libavcodec lacks the decoder or libx264.
	ErrCodec = errors.New("transcode: codec not available")

	// ErrTranscode wraps a libavcodec failure while decoding or encoding
	// a unit; the Transcoder resumes at the next keyframe.
	ErrTranscode = errors.New("transcode: failed")

	// ErrClosed is returned after Close.
	ErrClosed = errors.New("transcode: closed")
)
