package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// BucketSegmentEnds holds, for each camera stopped on a node, the end of its
// last segment there (SegmentEnd JSON, key = camera id), so that the node
// that records the camera next starts no segment before it. Entries expire
// after SegmentEndsTTL.
const BucketSegmentEnds = "segment_ends"

// SegmentEndsTTL is how long an entry of BucketSegmentEnds lives.
const SegmentEndsTTL = 10 * time.Minute

// SegmentEnd is the end of a camera's last segment on a node.
type SegmentEnd struct {
	// EndMs is the end, Unix milliseconds (the segment's start plus its
	// duration).
	EndMs int64 `json:"end_ms"`
	// Node is the node that wrote the segment.
	Node string `json:"node"`
}

// PutSegmentEnd stores e as camera's last segment end. It fails fast with
// ErrNotConnected while NATS is unreachable (a node fenced by an outage
// stops all its cameras at once).
func (b *Bus) PutSegmentEnd(ctx context.Context, camera string, e SegmentEnd) error {
	if err := validCamera(camera); err != nil {
		return fmt.Errorf("put segment end: %w", err)
	}
	if err := b.usable(); err != nil {
		return fmt.Errorf("put segment end of %s: %w", camera, err)
	}
	kv, err := b.bucket(BucketSegmentEnds)
	if err != nil {
		return fmt.Errorf("put segment end of %s: %w", camera, err)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("put segment end of %s: %w", camera, err)
	}
	if _, err := kv.Put(ctx, camera, data); err != nil {
		return fmt.Errorf("put segment end of %s: %w", camera, mapKVErr(err))
	}
	return nil
}

// GetSegmentEnd returns camera's last segment end; ok is false when none is
// stored (never stopped, or longer ago than SegmentEndsTTL). A record that
// does not decode is an error wrapping ErrInvalidMessage.
func (b *Bus) GetSegmentEnd(ctx context.Context, camera string) (e SegmentEnd, ok bool, err error) {
	if err := validCamera(camera); err != nil {
		return SegmentEnd{}, false, fmt.Errorf("get segment end: %w", err)
	}
	data, _, err := b.KVGet(ctx, BucketSegmentEnds, camera)
	if errors.Is(err, ErrKeyNotFound) {
		return SegmentEnd{}, false, nil
	}
	if err != nil {
		return SegmentEnd{}, false, err
	}
	if err := json.Unmarshal(data, &e); err != nil || e.EndMs <= 0 {
		return SegmentEnd{}, false, fmt.Errorf("segment end of %s: %w", camera, ErrInvalidMessage)
	}
	return e, true, nil
}
