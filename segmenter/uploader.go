package segmenter

import (
	"errors"
	"math/rand/v2"
	"os"
	"time"

	"go.uber.org/zap"
)

// next takes the oldest queued segment whose camera has no upload running,
// so one camera's segments reach storage in order. It returns nil when the
// spool closes.
func (s *Spool) next() *queued {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return nil
		}
		for _, q := range s.queue {
			if !q.busy && !s.busyCam[q.seg.Camera] {
				q.busy = true
				s.busyCam[q.seg.Camera] = true
				return q
			}
		}
		s.cond.Wait()
	}
}

// done removes q from the queue after its upload.
func (s *Spool) done(q *queued, stored bool) {
	s.mu.Lock()
	delete(s.busyCam, q.seg.Camera)
	q.busy = false
	if stored {
		for i, x := range s.queue {
			if x == q {
				s.unqueue(i)
				break
			}
		}
	}
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *Spool) worker() {
	defer s.wg.Done()
	for {
		q := s.next()
		if q == nil {
			return
		}
		stored, refused := s.upload(q)
		if stored || refused {
			removeSegmentFiles(q.seg.Path)
		}
		s.done(q, stored || refused)
		if refused && s.cfg.OnDropped != nil {
			s.cfg.OnDropped(q.seg, "upload_failed")
		}
	}
}

// upload stores q's segment, retrying with backoff and jitter until it
// succeeds (stored), storage refuses it for good (refused) or the spool
// closes.
func (s *Spool) upload(q *queued) (stored, refused bool) {
	seg := q.seg
	wait := s.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		err := s.uploadOnce(seg)
		if err == nil {
			if s.cfg.OnStored != nil {
				s.cfg.OnStored(seg, time.Since(q.readyAt))
			}
			return true, false
		}
		if s.ctx.Err() != nil {
			return false, false
		}
		if s.cfg.OnUploadError != nil {
			s.cfg.OnUploadError(seg, err)
		}
		if errors.Is(err, ErrUploadRefused) {
			s.cfg.Log.Error("segment refused by storage, dropped",
				zap.String("camera", seg.Camera), zap.Int64("start_ms", seg.StartMs()), zap.Error(err))
			return false, true
		}
		s.cfg.Log.Warn("segment upload failed, retrying",
			zap.String("camera", seg.Camera), zap.Int64("start_ms", seg.StartMs()),
			zap.Int("attempt", attempt), zap.Duration("retry_in", wait), zap.Error(err))
		jitter := time.Duration(rand.Int64N(int64(wait)/4 + 1))
		t := time.NewTimer(wait + jitter)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return false, false
		case <-t.C:
		}
		wait *= 2
		if wait > s.cfg.RetryMax {
			wait = s.cfg.RetryMax
		}
	}
}

func (s *Spool) uploadOnce(seg Segment) error {
	f, err := os.Open(seg.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.cfg.Upload(s.ctx, seg, f)
}
