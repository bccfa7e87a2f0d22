package transcode

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with
// errors.Is.
var (
	// ErrUnavailable means the binary was built without cgo: nothing can
	// be transcoded.
	ErrUnavailable = errors.New("audio transcoding unavailable: built without cgo")

	// ErrCodec means the track's codec is not G.711 or Opus, or its
	// parameters (rate, channels) are out of range, or libavcodec lacks
	// the decoder or the AAC encoder.
	ErrCodec = errors.New("audio codec cannot be transcoded")

	// ErrDecode means a unit could not be decoded (an Opus packet that
	// breaks the framing rules or that libavcodec refuses).
	ErrDecode = errors.New("audio decode failed")

	// ErrEncode means libavcodec's AAC encoder failed.
	ErrEncode = errors.New("aac encode failed")

	// ErrClosed means the Transcoder was closed.
	ErrClosed = errors.New("transcoder closed")
)
