package recorder

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
)

// EndStore keeps the end of each camera's last segment for the node that
// records the camera next: NATS KV in production, a map in tests.
type EndStore interface {
	// GetEnd returns the end stored for camera id; ok is false when none
	// is.
	GetEnd(ctx context.Context, id string) (end time.Time, ok bool, err error)

	// PutEnd stores end as the end of camera id's last segment.
	PutEnd(ctx context.Context, id string, end time.Time) error
}

// Bounds of the last segment end's exchange.
const (
	// endReadTimeout bounds the read of the EndStore when a camera starts;
	// it starts without the stored end when it cannot be read in time
	// (logged).
	endReadTimeout = 500 * time.Millisecond

	// endWriteTimeout bounds the write of the EndStore when a camera stops,
	// before its lease goes: a node draining hundreds of cameras writes as
	// many ends at once.
	endWriteTimeout = 2 * time.Second

	// maxEndAhead is how far ahead of this node's clock a stored end may
	// lie. A late anchor puts it a few seconds ahead at most; more is a
	// clock out of step, and following it would shift this node's
	// recording of the camera by as much.
	maxEndAhead = 10 * time.Second

	// endsKeep is how long this node remembers the end of a camera it
	// stopped, for a start again on this node that cannot read the store.
	endsKeep = 10 * time.Minute
)

// noteEnd remembers end as camera id's last segment end on this node,
// unless a later one is remembered.
func (r *Recorder) noteEnd(id string, end time.Time) {
	if end.IsZero() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if end.After(r.ends[id]) {
		r.ends[id] = end
	}
	for k, e := range r.ends {
		if time.Since(e) > endsKeep {
			delete(r.ends, k)
		}
	}
}

// LastEnd returns the end of the last segment of a camera this node
// stopped in the last endsKeep, zero if none.
func (r *Recorder) LastEnd(id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ends[id]
}

// startEnd returns the time before which camera id's next run starts no
// segment, and the cause of the gap that ends at its first segment: the
// later of the end remembered here and the end stored by the node that
// recorded it last (ignored when too far ahead of this clock), a handover;
// or, when storage holds a later segment that no record follows, that
// segment's end, a crash of the node that recorded it.
func (o *owner) startEnd() (time.Time, status.Cause) {
	end := o.r.LastEnd(o.id)
	if o.r.cfg.Ends != nil {
		ctx, cancel := context.WithTimeout(context.Background(), endReadTimeout)
		stored, ok, err := o.r.cfg.Ends.GetEnd(ctx, o.id)
		cancel()
		switch {
		case err != nil:
			o.log.Warn("last segment end not read", zap.Error(err))
		case !ok:
		case time.Until(stored) > maxEndAhead:
			o.log.Warn("last segment end ignored: too far ahead of this node's clock",
				zap.Duration("ahead", time.Until(stored)))
		case stored.After(end):
			end = stored
		}
	}
	if last, crashed := o.crashEnd(end); crashed {
		return last, status.CauseNodeCrash
	}
	if end.IsZero() {
		return end, ""
	}
	return end, status.CauseNodeHandover
}

// storeEnd stores end for the node that records the camera next.
func (o *owner) storeEnd(end time.Time) {
	if end.IsZero() || o.r.cfg.Ends == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), endWriteTimeout)
	defer cancel()
	if err := o.r.cfg.Ends.PutEnd(ctx, o.id, end); err != nil {
		o.log.Warn("last segment end not stored", zap.Error(err))
	}
}
