package stream

import "github.com/vigia/vigia/media"

// Consumer receives one camera's media from its pipeline goroutine, after
// the segmenter. Calls must return quickly: a consumer that can be slow
// keeps its own bounded queue (a Queue) and drops (and counts) rather than
// block the camera.
//
// Units are shared and must not be modified, nor kept past the Unit call:
// once the segmenter and every consumer have returned, the pipeline gives
// the unit's memory back (media.Unit.Release) and it is reused for a later
// frame. A consumer that needs a unit's data later copies it, or reads a
// video frame back through u.Stored, where the segmenter wrote it; that
// read fails once the frame's segment has ended (at a later keyframe), so
// the consumer falls back to a newer frame or gives up.
type Consumer interface {
	// Tracks starts a new run of the source with these tracks.
	Tracks(tracks []*media.Track)

	// Unit delivers one access unit. A unit after a gap (lost units, or a
	// new run) is always a video keyframe. u and its memory are valid
	// until Unit returns.
	Unit(u *media.Unit)

	// Close releases the consumer when the camera stops.
	Close()
}

// ConsumerFactory builds a camera's consumer; it may return nil when it
// has nothing to do for that camera.
type ConsumerFactory func(camera string) Consumer
