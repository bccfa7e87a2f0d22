// Package segmenter turns access units into standalone fMP4 segments (ftyp+moov,
// then moof+free+mdat fragments written through to the spool file as the units
// arrive), spools them on local disk with fsync per fragment, recovers the spool
// after a crash and uploads finished segments with retry.
//
// It knows nothing of storage or NATS: the uploader takes an Upload function
// and reports through function fields.
package segmenter

import (
	"time"

	"github.com/vigia/vigia/media"
)

// Segment is a finished (or recovered) segment waiting in the spool or stored.
type Segment struct {
	// Camera is the camera id.
	Camera string `json:"camera"`

	// Start is the wall-clock time of the segment's first video frame.
	Start time.Time `json:"start"`

	// Duration is the media duration of the video track.
	Duration time.Duration `json:"duration"`

	// Codec is the video codec.
	Codec media.Codec `json:"codec"`

	// AudioCodec is the audio codec, empty without audio.
	AudioCodec media.Codec `json:"audio_codec,omitempty"`

	// Width and Height of the video.
	Width  int `json:"width"`
	Height int `json:"height"`

	// InitSize is the byte size of the init part (ftyp+moov).
	InitSize int64 `json:"init_size"`

	// Size is the file size.
	Size int64 `json:"size"`

	// Frames is the number of video frames in the segment.
	Frames int `json:"frames"`

	// Recovered is true for a segment cut short by a crash and recovered.
	Recovered bool `json:"recovered,omitempty"`

	// Path is the spool file holding the segment.
	Path string `json:"-"`
}

// StartMs returns the segment start in Unix milliseconds.
func (s Segment) StartMs() int64 { return s.Start.UnixMilli() }

// DurationMs returns the segment duration in milliseconds.
func (s Segment) DurationMs() int64 { return s.Duration.Milliseconds() }

// End returns the wall-clock end of the segment.
func (s Segment) End() time.Time { return s.Start.Add(s.Duration) }

// Reasons a Writer gives OnGap for the gaps it makes itself.
const (
	// GapKeyframes: the segment reached WriterConfig.MaxDuration (or twice
	// WriterConfig.MaxBytes) without a keyframe and was closed; video was
	// dropped until the next one.
	GapKeyframes = "keyframes"
	// GapTimestamps: the camera's timestamps stepped back or jumped ahead
	// by more than WriterConfig.MaxJump (it sent nothing for that long).
	GapTimestamps = "timestamps"
)

// maxSegmentDuration returns the longest segment a Writer cuts for the
// target duration: it cuts at the first keyframe at or after target, and
// at the latest at target plus the larger of target and one minute.
// Readers of storage look back by this much: it is
// storage.MaxSegmentDuration, which the segmenter may not import;
// TestLayoutMatchesStorage checks the two agree.
func maxSegmentDuration(target time.Duration) time.Duration {
	if target <= 0 {
		target = 60 * time.Second
	}
	return target + max(target, time.Minute)
}

// touchTolerance is how far a segment may start after the end of the one
// before and still follow it without a gap: storage keys keep start and
// duration to the millisecond, so readers of storage allow
// storage.TouchToleranceMs, and the Writer reports a gap (OnGap) only past
// the same tolerance, so that the gaps it reports are those readers see.
const touchTolerance = 2 * time.Millisecond
