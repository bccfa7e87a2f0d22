package thumbs

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

// job is one keyframe to turn into a minute and/or hourly thumbnail.
type job struct {
	cam            *camState
	nalus          [][]byte // a copy of the keyframe's NAL units
	codec          media.Codec
	t              time.Time
	minute, hourly bool
}

// enqueue queues j, or drops and counts it when the queue is full.
func (s *Service) enqueue(j job) {
	select {
	case <-s.closing:
		return
	default:
	}
	select {
	case s.jobs <- j:
	default:
		if n := s.dropped.Add(1); n == 1 || n%1000 == 0 {
			s.cfg.Log.Warn("thumbnail queue full, thumbnail dropped",
				zap.String("camera", j.cam.id), zap.Uint64("dropped", n))
		}
	}
}

// work runs one worker until Close: it has each job's keyframe decoded
// alone by a decoder process (no state passes from one camera to the
// next), scaled and encoded, and stores the JPEG.
func (s *Service) work() {
	defer s.wg.Done()
	for {
		select {
		case <-s.closing:
			return
		case j := <-s.jobs:
			s.thumbnail(j)
		}
	}
}

// thumbnail makes and stores one job's image.
func (s *Service) thumbnail(j job) {
	log := s.cfg.Log.With(zap.String("camera", j.cam.id))
	img, err := s.decodeStill(context.Background(), j.codec, j.nalus, s.cfg.Width, s.cfg.Quality)
	if err != nil {
		s.decodeErrors.Add(1)
		log.Debug("thumbnail not made", zap.Error(err))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StoreTimeout)
	defer cancel()
	if j.minute {
		_, _ = s.store(ctx, KindMinute, j.cam.id, j.t, img.JPEG, log)
	}
	if j.hourly {
		_, _ = s.store(ctx, KindHourly, j.cam.id, j.t, img.JPEG, log)
	}
}

func (s *Service) store(ctx context.Context, kind Kind, camera string, t time.Time, img []byte, log *zap.Logger) (string, error) {
	key, err := s.cfg.Store(ctx, kind, camera, t, img)
	if err != nil {
		s.storeErrors.Add(1)
		log.Warn("image not stored", zap.String("kind", string(kind)), zap.Error(err))
		return "", err
	}
	s.stored[kindIndex(kind)].Add(1)
	return key, nil
}

// decodeStill has a keyframe (its NAL units, parameter sets in-band)
// decoded alone by a decoder process and encoded as a JPEG at width (0:
// full size); the process's CPU time is added to the Service's.
func (s *Service) decodeStill(ctx context.Context, codec media.Codec, nalus [][]byte, width, quality int) (*decodeproc.Result, error) {
	res, err := s.cfg.Decoder.Decode(ctx, &decodeproc.Request{
		Codec: codec, Still: true, Units: [][][]byte{nalus},
		Image: decodeproc.JPEG, ImageWidth: width, Quality: quality,
	})
	if err != nil {
		return nil, err
	}
	s.cpuNanos.Add(int64(res.CPU))
	return res, nil
}
