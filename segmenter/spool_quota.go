package segmenter

import (
	"time"

	"go.uber.org/zap"
)

// The quota (SpoolConfig.MaxBytes) bounds the backlog: the finished
// segments that wait for storage behind a newer finished segment of their
// camera. Neither the segments being written nor each camera's newest
// finished segment count: a storage that keeps up stores every segment
// before its camera finishes the next one, so while it does the backlog is
// empty, however many cameras finish a segment at the same moment (cameras
// started together cut together) and whatever their bitrate. Only a storage
// that falls behind, or is away, makes a backlog, and that is what the
// quota holds: past it, segments are dropped, oldest first among the
// cameras whose backlog is over their share of it (overQuota). The disk itself is
// the hard limit on everything the spool holds (reserve, noSpace).

// enqueue queues a finished segment for upload, after any other of its
// camera; the segment it follows, if any, joins the backlog, which is then
// brought back under the quota.
func (s *Spool) enqueue(seg Segment) {
	q := &queued{seg: seg, readyAt: time.Now()}
	s.mu.Lock()
	if prev := s.newest[seg.Camera]; prev != nil {
		prev.backlog = true
		s.backlog += prev.seg.Size
	}
	s.newest[seg.Camera] = q
	s.queue = append(s.queue, q)
	dropped := s.overQuota()
	s.mu.Unlock()
	s.cond.Signal()
	for _, seg := range dropped {
		removeSegmentFiles(seg.Path)
		s.cfg.Log.Error("spool full, oldest segment dropped",
			zap.String("camera", seg.Camera), zap.Int64("start_ms", seg.StartMs()), zap.Int64("size", seg.Size),
			zap.Int64("quota", s.cfg.MaxBytes))
		if s.cfg.OnDropped != nil {
			s.cfg.OnDropped(seg, "spool_full")
		}
	}
}

// overQuota takes segments of the backlog not being uploaded out of the
// queue until the backlog is within the quota, and returns them. Each
// camera with a backlog has an equal share of the quota: the oldest
// segment of the cameras over their share goes first, so that a camera
// whose backlog grows faster than the others' (a camera sending far more
// than planned) loses its own segments, never another's. Cameras that
// record alike are over their share alike, and lose their segments oldest
// first across them. The caller holds s.mu.
func (s *Spool) overQuota() []Segment {
	var dropped []Segment
	for s.backlog > s.cfg.MaxBytes {
		i := s.evictable()
		if i < 0 {
			break
		}
		dropped = append(dropped, s.queue[i].seg)
		s.unqueue(i)
	}
	return dropped
}

// evictable returns the index in the queue of the segment the quota takes
// next (overQuota), -1 if none can be. The caller holds s.mu.
func (s *Spool) evictable() int {
	held := map[string]int64{}
	for _, q := range s.queue {
		if q.backlog {
			held[q.seg.Camera] += q.seg.Size
		}
	}
	share := s.cfg.MaxBytes / int64(max(len(held), 1))
	oldest := -1
	for j, q := range s.queue {
		if !q.backlog || q.busy {
			continue
		}
		if held[q.seg.Camera] > share {
			return j
		}
		if oldest < 0 {
			oldest = j
		}
	}
	return oldest
}

// unqueue removes s.queue[i] (stored or dropped) with its bytes. When it was
// its camera's newest finished segment, the one before it, if any, leaves
// the backlog to take its place. The caller holds s.mu.
func (s *Spool) unqueue(i int) {
	q := s.queue[i]
	s.queue = append(s.queue[:i], s.queue[i+1:]...)
	s.bytes -= q.seg.Size
	if q.backlog {
		s.backlog -= q.seg.Size
	}
	if s.newest[q.seg.Camera] != q {
		return
	}
	delete(s.newest, q.seg.Camera)
	for j := len(s.queue) - 1; j >= 0; j-- {
		if p := s.queue[j]; p.seg.Camera == q.seg.Camera {
			p.backlog = false
			s.backlog -= p.seg.Size
			s.newest[q.seg.Camera] = p
			return
		}
	}
}

// Backlog returns the bytes of the finished segments that count against the
// quota: those waiting behind a newer finished segment of their camera.
func (s *Spool) Backlog() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backlog
}

// MaxBytes returns the quota of the backlog.
func (s *Spool) MaxBytes() int64 { return s.cfg.MaxBytes }
