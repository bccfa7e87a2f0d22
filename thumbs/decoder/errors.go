package decoder

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrUnavailable means the binary was built without cgo, so nothing can
	// be decoded.
	ErrUnavailable = errors.New("video decoding unavailable: built without cgo")

	// ErrCodec means the codec is not H.264 or H.265, or libavcodec has no
	// decoder for it.
	ErrCodec = errors.New("unsupported codec")

	// ErrDecode means libavcodec refused the access unit.
	ErrDecode = errors.New("decode failed")

	// ErrNoPicture means no picture has been decoded yet.
	ErrNoPicture = errors.New("no decoded picture")

	// ErrScale means libswscale could not convert the picture.
	ErrScale = errors.New("scale failed")

	// ErrClosed means the Decoder was closed.
	ErrClosed = errors.New("decoder closed")
)
