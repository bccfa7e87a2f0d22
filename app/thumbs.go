package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/thumbs"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

// thumbsPart is the node's thumbnail and snapshot service.
type thumbsPart struct {
	svc      *thumbs.Service
	stopSnap func()
}

// startDecoders makes the pool of decoder processes through which
// thumbnails, snapshots, motion detection and export thumbnails decode
// (docs/thumbnails.md, "Decoder processes"). No process starts before the
// first request, so a node that decodes nothing runs none.
func (a *App) startDecoders() {
	a.decoders = decodeproc.New(decodeproc.Config{
		Command: a.mode.DecoderCommand,
		Log:     a.log.With(zap.String("component", "decoder")),
	})
	a.registerDecoderMetrics()
}

// Decoders returns the pool of decoder processes.
func (a *App) Decoders() *decodeproc.Pool { return a.decoders }

// startImaging starts thumbnails, snapshots and motion detection and
// returns their recorder consumers.
func (a *App) startImaging() []stream.ConsumerFactory {
	var fs []stream.ConsumerFactory
	if f := a.startThumbs(); f != nil {
		fs = append(fs, f)
	}
	if f := a.startMotion(); f != nil {
		fs = append(fs, f)
	}
	return fs
}

// closeImaging stops them, after the recorder closed their consumers.
func (a *App) closeImaging() {
	if a.thumbs != nil {
		if a.thumbs.stopSnap != nil {
			a.thumbs.stopSnap()
		}
		a.thumbs.svc.Close()
	}
	if a.motion != nil {
		a.motion.Close()
	}
}

func (a *App) startThumbs() stream.ConsumerFactory {
	cfg := a.cfg.Thumbs
	log := a.log.With(zap.String("component", "thumbs"))
	svc := thumbs.New(thumbs.Config{
		Width:    cfg.Width,
		Interval: time.Duration(cfg.Minute),
		Workers:  cfg.Workers,
		Queue:    cfg.Queue,
		Store:    a.storeImage,
		Decoder:  a.decoders,
		Log:      log,
	})
	a.thumbs = &thumbsPart{svc: svc}
	a.registerThumbMetrics(svc)
	if !svc.Available() {
		return nil
	}
	if a.bus != nil {
		stop, err := a.bus.ServeSnapshots(svc.Answer)
		if err != nil {
			log.Warn("snapshot requests not served", zap.Error(err))
		} else {
			a.thumbs.stopSnap = stop
		}
	}
	return func(camera string) stream.Consumer {
		if c := svc.Consumer(camera); c != nil {
			return c
		}
		return nil
	}
}

// storeImage stores a JPEG under the key of its kind (storage keys).
func (a *App) storeImage(ctx context.Context, kind thumbs.Kind, camera string, t time.Time, jpeg []byte) (string, error) {
	var key string
	switch kind {
	case thumbs.KindMinute:
		key = storage.MinuteThumbKey(camera, t)
	case thumbs.KindHourly:
		key = storage.HourlyThumbKey(camera, t)
	case thumbs.KindSnapshot:
		key = storage.SnapshotKey(camera, t)
	}
	if key == "" {
		return "", fmt.Errorf("no %s image key for camera %q", kind, camera)
	}
	err := a.store.Put(ctx, key, bytes.NewReader(jpeg), int64(len(jpeg)), storage.PutOptions{ContentType: "image/jpeg"})
	if err != nil {
		return "", err
	}
	return key, nil
}

// SnapshotAt stores camera's picture at t, decoded from its recordings
// (any node can do it), under snap/{camera}/{unixMs}.jpg with the frame's
// time, and returns the key and that time.
func (a *App) SnapshotAt(ctx context.Context, camera string, t time.Time) (key string, frame time.Time, err error) {
	img, ft, err := thumbs.SnapshotAt(ctx, a.decoders, thumbs.Recordings{Find: a.findSegment, Read: a.readObject}, camera, t, 0, 90)
	if err != nil {
		return "", time.Time{}, err
	}
	key, err = a.storeImage(ctx, thumbs.KindSnapshot, camera, ft, img)
	return key, ft, err
}

// findSegment returns camera's stored segment that covers t (the
// catalogue's SegmentAt).
func (a *App) findSegment(ctx context.Context, camera string, t time.Time) (string, time.Time, error) {
	s, err := a.cat.SegmentAt(ctx, camera, t)
	if err != nil {
		return "", time.Time{}, err
	}
	return s.Key, s.Start(), nil
}

func (a *App) readObject(ctx context.Context, key string) ([]byte, error) {
	r, err := a.store.Get(ctx, key, 0, -1)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func (a *App) registerThumbMetrics(svc *thumbs.Service) {
	metrics.RegisterThumbs(a.reg, func() metrics.ThumbStats {
		s := svc.Stats()
		return metrics.ThumbStats{Minute: s.Minute, Hourly: s.Hourly, Snapshots: s.Snapshots, Dropped: s.Dropped,
			DecodeErrors: s.DecodeErrors, StoreErrors: s.StoreErrors, Unreadable: s.Unreadable, Queued: s.Queued, CPU: s.CPU}
	}, svc.Available)
}

func (a *App) registerDecoderMetrics() {
	pool := a.decoders
	metrics.RegisterDecoders(a.reg, decodeproc.Reasons, func() metrics.DecoderStats {
		s := pool.Stats()
		return metrics.DecoderStats{Requests: s.Requests, Restarts: s.Restarts, StartFailures: s.StartFailures, Processes: s.Processes, CPU: s.CPU}
	}, pool.ResidentBytes)
}
