package thumbs

import (
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/stream"
)

var _ stream.Consumer = (*Consumer)(nil)

// Consumer receives one camera's media from its pipeline goroutine (a
// stream.Consumer). Its calls only note keyframes and queue
// thumbnails; they never block.
type Consumer struct {
	s   *Service
	cam *camState

	video    int
	codec    media.Codec
	have     bool
	lastSlot int64 // interval index of the last minute thumbnail
	lastHour int64 // hour index of the last hourly thumbnail
}

// Consumer returns camera's consumer, or nil when the Service cannot
// decode video. The camera's newest keyframe becomes available to
// Snapshot.
func (s *Service) Consumer(camera string) *Consumer {
	if !s.available {
		return nil
	}
	return &Consumer{s: s, cam: s.register(camera), video: -1}
}

// Tracks starts a new run of the source.
func (c *Consumer) Tracks(tracks []*media.Track) {
	c.video, c.codec = -1, ""
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			c.video, c.codec = i, t.Codec
			return
		}
	}
}

// Unit notes a keyframe and queues a thumbnail when it is the first of an
// interval or an hour (by the unit's wall-clock time). It keeps nothing of
// u's memory: the keyframe for snapshots is noted by where it was stored
// (u.Stored; copied when it was not), and a thumbnail's job holds a copy
// of the keyframe's NAL units (one a minute).
func (c *Consumer) Unit(u *media.Unit) {
	if u.Track != c.video || !u.Key || len(u.NALUs) == 0 {
		return
	}
	t := u.Time
	if t.IsZero() {
		t = time.Now()
	}
	c.cam.setKeyframe(u, c.codec, t)
	slot := floorDiv(t.UnixNano(), int64(c.s.cfg.Interval))
	hour := floorDiv(t.Unix(), 3600)
	minute := !c.have || slot != c.lastSlot
	hourly := !c.have || hour != c.lastHour
	c.have, c.lastSlot, c.lastHour = true, slot, hour
	if minute || hourly {
		c.s.enqueue(job{cam: c.cam, nalus: media.CloneNALUs(u.NALUs), codec: c.codec, t: t, minute: minute, hourly: hourly})
	}
}

// Close forgets the camera.
func (c *Consumer) Close() {
	c.s.unregister(c.cam)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
