package transcode

import "time"

// Stats is what a Transcoder has done.
type Stats struct {
	// CPU is the thread CPU time spent in libavcodec and libswresample
	// (decoding Opus, resampling, encoding AAC), measured inside each call;
	// the Go around them (G.711 decoding, timing) is not counted.
	CPU time.Duration
	// Audio is the duration of the audio taken in (units decoded).
	Audio time.Duration
	// Frames counts the AAC frames emitted.
	Frames int64
}
