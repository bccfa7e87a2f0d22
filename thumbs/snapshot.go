package thumbs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Snapshot is a stored snapshot.
type Snapshot struct {
	// Key is the object key of the JPEG.
	Key string
	// Time is the wall-clock time of the frame.
	Time time.Time
	// Width and Height of the image.
	Width, Height int
	// JPEG is the image; nil when the snapshot is the one already stored
	// of the same keyframe (the Service keeps no images).
	JPEG []byte
}

// snapshotTries bounds the keyframes one snapshot tries to read back: the
// segment of the newest keyframe ends at the keyframe that starts the next
// one, and may do so while it is read.
const snapshotTries = 3

// Snapshot stores camera's newest keyframe as a full-resolution JPEG. Two
// requests between the same two keyframes get the same stored image
// without decoding again.
//
// The keyframe is read back from the spool file of its segment
// (media.Stored). When that segment has ended meanwhile, the camera's
// newest keyframe is taken again, up to snapshotTries keyframes, waiting
// up to Config.KeyframeWait for it when the one that ended the segment is
// not noted yet. It fails with ErrNoKeyframe when the camera is not
// recorded here, has sent no keyframe yet, or its newest keyframe can no
// longer be read and none follows within the wait (its segment ended with
// no keyframe after it: the camera stopped or a discontinuity closed the
// segment).
func (s *Service) Snapshot(ctx context.Context, camera string) (Snapshot, error) {
	if !s.available {
		return Snapshot{}, ErrUnavailable
	}
	select {
	case <-s.closing:
		return Snapshot{}, ErrClosed
	default:
	}
	cam := s.camera(camera)
	if cam == nil {
		return Snapshot{}, fmt.Errorf("camera %s: %w", camera, ErrNoKeyframe)
	}
	k, nalus, done, err := s.readKeyframe(ctx, cam)
	if err != nil {
		return Snapshot{}, err
	}
	if done != nil {
		return *done, nil
	}

	img, err := s.decodeStill(ctx, k.codec, nalus, 0, s.cfg.SnapshotQuality)
	if err != nil {
		s.decodeErrors.Add(1)
		return Snapshot{}, fmt.Errorf("camera %s: snapshot: %w", camera, err)
	}
	key, err := s.store(ctx, KindSnapshot, camera, k.t, img.JPEG, s.cfg.Log.With(zap.String("camera", camera)))
	if err != nil {
		return Snapshot{}, fmt.Errorf("camera %s: snapshot: %w", camera, err)
	}
	snap := Snapshot{Key: key, Time: k.t, Width: img.ImageWidth, Height: img.ImageHeight, JPEG: img.JPEG}
	cam.setSnapshot(k.id, snap)
	return snap, nil
}

// readKeyframe returns cam's newest keyframe and its NAL units, or the
// snapshot already stored of it (done). When the keyframe cannot be read
// back, the newest keyframe is taken again, waited for up to
// Config.KeyframeWait (or ctx) while there is no newer one, up to
// snapshotTries reads; each failed read is counted (Stats.Unreadable).
func (s *Service) readKeyframe(ctx context.Context, cam *camState) (k keyframe, nalus [][]byte, done *Snapshot, err error) {
	var failed uint64 // id of the keyframe that could not be read
	var readErr error
	var wait <-chan time.Time // the end of the wait for a newer keyframe
	for reads := 0; reads < snapshotTries; {
		k, snap, stored, newer := cam.keyframe()
		switch {
		case k.id == 0:
			return k, nil, nil, fmt.Errorf("camera %s: %w", cam.id, ErrNoKeyframe)
		case stored:
			return k, nil, &snap, nil
		case k.id == failed:
			if wait == nil {
				t := time.NewTimer(s.cfg.KeyframeWait)
				defer t.Stop()
				wait = t.C
			}
			select {
			case <-newer:
				continue
			case <-wait:
			case <-ctx.Done():
			}
			return k, nil, nil, fmt.Errorf("camera %s: %w: the segment of the newest keyframe has ended, and no keyframe followed (waited up to %v) (%v)", cam.id, ErrNoKeyframe, s.cfg.KeyframeWait, readErr)
		}
		nalus, err := k.load()
		if err == nil {
			return k, nalus, nil, nil
		}
		failed, readErr = k.id, err
		s.unreadable.Add(1)
		reads++
	}
	return keyframe{}, nil, nil, fmt.Errorf("camera %s: %w: %d keyframes in a row could not be read back (%v)", cam.id, ErrNoKeyframe, snapshotTries, readErr)
}
