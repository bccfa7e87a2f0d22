package thumbs

import (
	"sync"

	"github.com/vigia/vigia/media"
)

// camState is what the Service keeps of one camera: its newest keyframe,
// for snapshots.
type camState struct {
	id string

	mu       sync.Mutex
	key      *media.Unit
	codec    media.Codec
	snapUnit *media.Unit // keyframe of the last snapshot stored
	snap     Snapshot
}

func (c *camState) setKeyframe(u *media.Unit, codec media.Codec) {
	c.mu.Lock()
	c.key, c.codec = u, codec
	c.mu.Unlock()
}

func (c *camState) keyframe() (*media.Unit, media.Codec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.key, c.codec
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
