// Package transcode turns a camera's G.711 or Opus audio into AAC-LC, the
// audio the segmenter records and browsers play. G.711 is decoded in Go
// (package audio); Opus is decoded, and AAC encoded, by libavcodec through
// cgo (FFmpeg 5.1 or later), resampling with libswresample where the AAC
// encoder does not take the input's rate.
//
// A Transcoder handles one track: units in (one RTP packet's G.711
// samples, or one Opus packet), AAC frames of 1024 samples out, mono,
// timed on the input's clock. A Stage puts a Transcoder between a camera's
// queue and its segmenter and keeps the units of a run in time order.
//
// Built without cgo, the package still compiles: New and NewStage return
// ErrUnavailable and Available reports false.
package transcode
