package thumbs

import (
	"context"
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decoder"
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

// work runs one worker until Close. Each worker keeps one decoder per
// codec and reuses it for every camera: a thumbnail is a keyframe decoded
// alone, so no state passes from one camera to the next.
func (s *Service) work() {
	defer s.wg.Done()
	decs := make(map[media.Codec]*decoder.Decoder)
	defer func() {
		for _, d := range decs {
			d.Close()
		}
	}()
	for {
		select {
		case <-s.closing:
			return
		case j := <-s.jobs:
			s.thumbnail(decs, j)
		}
	}
}

// thumbnail decodes, scales, encodes and stores one job.
func (s *Service) thumbnail(decs map[media.Codec]*decoder.Decoder, j job) {
	log := s.cfg.Log.With(zap.String("camera", j.cam.id))
	img, err := s.measure(func() ([]byte, error) {
		d, err := decoderFor(decs, j.codec)
		if err != nil {
			return nil, err
		}
		return decodeJPEG(d, j.nalus, s.cfg.Width, s.cfg.Quality)
	})
	if err != nil {
		s.decodeErrors.Add(1)
		log.Debug("thumbnail not made", zap.Error(err))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StoreTimeout)
	defer cancel()
	if j.minute {
		_, _ = s.store(ctx, KindMinute, j.cam.id, j.t, img, log)
	}
	if j.hourly {
		_, _ = s.store(ctx, KindHourly, j.cam.id, j.t, img, log)
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

// measure runs f on a locked OS thread and adds the thread's CPU time to
// the Service's total.
func (s *Service) measure(f func() ([]byte, error)) ([]byte, error) {
	runtime.LockOSThread()
	c0 := decoder.ThreadCPU()
	out, err := f()
	s.cpuNanos.Add(int64(decoder.ThreadCPU() - c0))
	runtime.UnlockOSThread()
	return out, err
}

func decoderFor(decs map[media.Codec]*decoder.Decoder, codec media.Codec) (*decoder.Decoder, error) {
	if d := decs[codec]; d != nil {
		return d, nil
	}
	d, err := decoder.New(codec, decoder.Options{})
	if err != nil {
		return nil, err
	}
	decs[codec] = d
	return d, nil
}

// decodeJPEG decodes a keyframe (its NAL units) alone and encodes it at
// width.
func decodeJPEG(d *decoder.Decoder, nalus [][]byte, width, quality int) ([]byte, error) {
	ok, err := d.DecodeStill(nalus)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, decoder.ErrNoPicture
	}
	img, err := d.YCbCr(width)
	if err != nil {
		return nil, err
	}
	return encodeJPEG(img, quality)
}
