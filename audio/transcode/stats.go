package transcode

import "time"

// Stats is what a Transcoder has done.
type Stats struct {
	// CPU is the thread CPU time spent in Unit and Flush.
	CPU time.Duration
	// Audio is the duration of the audio taken in (units decoded).
	Audio time.Duration
	// Frames counts the AAC frames emitted.
	Frames int64
}
