package thumbs

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/thumbs/decoder"
)

// Snapshot is a stored snapshot.
type Snapshot struct {
	// Key is the object key of the JPEG.
	Key string
	// Time is the wall-clock time of the frame.
	Time time.Time
	// Width and Height of the image.
	Width, Height int
	// JPEG is the image.
	JPEG []byte
}

// Snapshot stores camera's newest keyframe as a full-resolution JPEG. Two
// requests between the same two keyframes get the same stored image
// without decoding again. It fails with ErrNoKeyframe when the camera is
// not recorded here or has sent no keyframe yet.
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
	u, codec := cam.keyframe()
	if u == nil {
		return Snapshot{}, fmt.Errorf("camera %s: %w", camera, ErrNoKeyframe)
	}
	cam.mu.Lock()
	if cam.snapUnit == u {
		snap := cam.snap
		cam.mu.Unlock()
		return snap, nil
	}
	cam.mu.Unlock()

	var w, h int
	img, err := s.measure(func() ([]byte, error) {
		s.snapMu.Lock()
		defer s.snapMu.Unlock()
		if s.snapDec == nil {
			return nil, ErrClosed
		}
		d, err := decoderFor(s.snapDec, codec)
		if err != nil {
			return nil, err
		}
		ok, err := d.DecodeStill(u.NALUs)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, decoder.ErrNoPicture
		}
		pic, err := d.YCbCr(0)
		if err != nil {
			return nil, err
		}
		w, h = pic.Rect.Dx(), pic.Rect.Dy()
		return encodeJPEG(pic, s.cfg.SnapshotQuality)
	})
	if err != nil {
		s.decodeErrors.Add(1)
		return Snapshot{}, fmt.Errorf("camera %s: snapshot: %w", camera, err)
	}
	t := u.Time
	if t.IsZero() {
		t = time.Now()
	}
	key, err := s.store(ctx, KindSnapshot, camera, t, img, s.cfg.Log.With(zap.String("camera", camera)))
	if err != nil {
		return Snapshot{}, fmt.Errorf("camera %s: snapshot: %w", camera, err)
	}
	snap := Snapshot{Key: key, Time: t, Width: w, Height: h, JPEG: img}
	cam.mu.Lock()
	cam.snapUnit, cam.snap = u, snap
	cam.mu.Unlock()
	return snap, nil
}
