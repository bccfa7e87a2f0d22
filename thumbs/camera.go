package thumbs

import (
	"sync"
	"time"

	"github.com/vigia/vigia/media"
)

// camState is what the Service keeps of one camera: where its newest
// keyframe is, for snapshots, and the last snapshot stored (without its
// image).
type camState struct {
	id string

	mu     sync.Mutex
	key    keyframe      // newest keyframe; id 0 before the first
	snapID uint64        // keyframe id of the last snapshot stored
	snap   Snapshot      // that snapshot, JPEG nil
	newer  chan struct{} // closed when a keyframe is noted; nil until asked for
}

// setKeyframe notes keyframe u (see keyframe); it keeps nothing of u's
// memory.
func (c *camState) setKeyframe(u *media.Unit, codec media.Codec, t time.Time) {
	k := newKeyframe(u, codec, t)
	c.mu.Lock()
	k.id = c.key.id + 1
	c.key = k
	if c.newer != nil {
		close(c.newer)
		c.newer = nil
	}
	c.mu.Unlock()
}

// keyframe returns the newest keyframe, the snapshot already stored of it
// when there is one, and a channel closed when a newer keyframe is noted.
func (c *camState) keyframe() (k keyframe, snap Snapshot, stored bool, newer <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.newer == nil {
		c.newer = make(chan struct{})
	}
	return c.key, c.snap, c.key.id != 0 && c.snapID == c.key.id, c.newer
}

// setSnapshot notes the snapshot stored of keyframe id.
func (c *camState) setSnapshot(id uint64, snap Snapshot) {
	snap.JPEG = nil
	c.mu.Lock()
	c.snapID, c.snap = id, snap
	c.mu.Unlock()
}

func (s *Service) register(id string) *camState {
	c := &camState{id: id}
	s.mu.Lock()
	s.cams[id] = c
	s.mu.Unlock()
	return c
}

func (s *Service) unregister(c *camState) {
	s.mu.Lock()
	if s.cams[c.id] == c {
		delete(s.cams, c.id)
	}
	s.mu.Unlock()
}

func (s *Service) camera(id string) *camState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cams[id]
}

// Recording reports whether camera has a consumer on this node (it is
// recorded here), keyframe or not.
func (s *Service) Recording(camera string) bool {
	return s.camera(camera) != nil
}
