// Package transcode turns a camera's H.265 access units into H.264 ones
// with libavcodec (FFmpeg's HEVC decoder and libx264, through cgo), for
// browsers that cannot decode H.265. A Transcoder is one camera's: units go
// in in decoding order, H.264 units come out with the input's
// presentation times, keyframes carrying their SPS and PPS in band. It
// decodes and encodes on the calling goroutine (one thread each).
//
// Built without cgo, the package still compiles: New returns
// ErrUnavailable.
package transcode
