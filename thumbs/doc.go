// Package thumbs makes the images of a camera from its video: a thumbnail
// at the first keyframe of every minute and every hour, snapshots of the
// newest keyframe on demand, and snapshots at a past time from a stored
// recording segment (docs/thumbnails.md).
//
// It decodes keyframes only, off the recording path: each camera's
// Consumer notes keyframes from the pipeline goroutine and hands the few
// that become thumbnails to a shared pool of workers through a bounded
// queue that drops (and counts) when full. No unit is kept past its Unit
// call (the pipeline reuses their memory): a thumbnail's job holds a copy
// of its keyframe, and the newest keyframe for snapshots is read back from
// the spool file where the segmenter stored it. Images are stored through the
// Store function the caller provides; the package knows nothing of storage
// or NATS.
package thumbs
