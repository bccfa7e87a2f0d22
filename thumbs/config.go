package thumbs

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Kind says what an image is for.
type Kind string

// Kinds of images.
const (
	// KindMinute is the thumbnail of the first keyframe of a minute.
	KindMinute Kind = "minute"
	// KindHourly is the thumbnail of the first keyframe of an hour.
	KindHourly Kind = "hourly"
	// KindSnapshot is a full-resolution snapshot.
	KindSnapshot Kind = "snapshot"
)

// StoreFunc stores one JPEG of camera taken at t (the frame's wall-clock
// time) and returns its key.
type StoreFunc func(ctx context.Context, kind Kind, camera string, t time.Time, jpeg []byte) (key string, err error)

// DefaultKeyframeWait is Config.KeyframeWait's default: longer than a
// pipeline takes, on a loaded node, from closing a segment to noting the
// keyframe that starts the next.
const DefaultKeyframeWait = 2 * time.Second

// Config configures a Service.
type Config struct {
	// Width of thumbnails in pixels; the height keeps the aspect ratio.
	// Pictures are never enlarged. It defaults to 320.
	Width int

	// Interval between minute thumbnails: the first keyframe of every
	// interval (aligned on the Unix epoch) becomes one. It defaults to one
	// minute; tests shorten it.
	Interval time.Duration

	// Workers decode thumbnails in parallel. It defaults to 1.
	Workers int

	// Queue is the number of thumbnails waiting for a worker; past it new
	// ones are dropped and counted. It defaults to 1024 (every camera of a
	// large node crosses a minute boundary at once).
	Queue int

	// Quality of thumbnail JPEGs (1 to 100). It defaults to 75.
	Quality int

	// SnapshotQuality of snapshot JPEGs (1 to 100). It defaults to 90.
	SnapshotQuality int

	// StoreTimeout bounds one Store call. It defaults to 30 seconds.
	StoreTimeout time.Duration

	// KeyframeWait bounds how long a snapshot whose keyframe's segment
	// has ended waits for the camera's next keyframe: the keyframe that
	// ends a segment is noted once the segment's file is closed. A camera
	// that stopped, or a discontinuity, sends none. It defaults to
	// DefaultKeyframeWait.
	KeyframeWait time.Duration

	// Store stores the images. Required.
	Store StoreFunc

	// Decoder decodes the keyframes: a *decodeproc.Pool, shared with
	// motion detection. Without one that is Available, thumbnails and
	// snapshots are unavailable.
	Decoder Decoder

	// Log is the component's logger. It defaults to a no-op logger.
	Log *zap.Logger
}

func (c Config) withDefaults() Config {
	if c.Width <= 0 {
		c.Width = 320
	}
	if c.Interval <= 0 {
		c.Interval = time.Minute
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.Queue <= 0 {
		c.Queue = 1024
	}
	if c.Quality <= 0 || c.Quality > 100 {
		c.Quality = 75
	}
	if c.SnapshotQuality <= 0 || c.SnapshotQuality > 100 {
		c.SnapshotQuality = 90
	}
	if c.StoreTimeout <= 0 {
		c.StoreTimeout = 30 * time.Second
	}
	if c.KeyframeWait <= 0 {
		c.KeyframeWait = DefaultKeyframeWait
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	return c
}
