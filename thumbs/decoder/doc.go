// Package decoder decodes H.264 and H.265 access units with libavcodec
// (FFmpeg 5.1 or later, through cgo) and scales the picture with libswscale
// into Go images.
//
// A Decoder is not safe for concurrent use. One access unit goes in (its NAL
// units, without start codes); the newest decoded picture stays in the
// Decoder until the next one replaces it, and can be read at any size as
// an image.YCbCr (full-range 4:2:0, what image/jpeg writes) or as luma
// only (image.Gray).
//
// Built without cgo, the package still compiles: New returns
// ErrUnavailable and Available reports false.
package decoder
