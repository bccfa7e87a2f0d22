package thumbs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// SnapshotTimeout bounds a snapshot request: the answering node's
// snapshot and the asker's wait for it.
const SnapshotTimeout = 10 * time.Second

// Answer answers a snapshot request for camera (vigia.snapshot.{camera})
// when s records it: a snapshot taken now, within SnapshotTimeout, as a
// SnapshotReply in JSON, its Error set when it failed. ok is false for a
// camera recorded elsewhere, left to its node.
func (s *Service) Answer(camera string) (reply []byte, ok bool) {
	if !s.Recording(camera) {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), SnapshotTimeout)
	defer cancel()
	var r SnapshotReply
	snap, err := s.Snapshot(ctx, camera)
	if err != nil {
		r.Error = err.Error()
	} else {
		r = SnapshotReply{Key: snap.Key, TsMs: snap.Time.UnixMilli(), Width: snap.Width, Height: snap.Height}
	}
	data, _ := json.Marshal(r)
	return data, true
}

// SnapshotKey reads the reply to a snapshot request: the image's key, or
// an error with the reason the reply gives.
func SnapshotKey(reply []byte) (string, error) {
	var r SnapshotReply
	if err := json.Unmarshal(reply, &r); err != nil {
		return "", fmt.Errorf("snapshot reply: %w", err)
	}
	if r.Error != "" || r.Key == "" {
		return "", fmt.Errorf("snapshot: %s", r.Error)
	}
	return r.Key, nil
}
