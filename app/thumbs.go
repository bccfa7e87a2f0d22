package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

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

// thumbnailsStatus is the "thumbnails" field of /readyz: "available", or
// why not.
func (a *App) thumbnailsStatus() string {
	if a.thumbs.svc.Available() {
		return "available"
	}
	return "unavailable: " + thumbs.UnavailableReason(a.decoders)
}

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
		stop, err := a.bus.ServeSnapshots(a.answerSnapshot)
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

// answerSnapshot answers vigia.snapshot.{camera} for the cameras recorded
// here; others are left to their node.
func (a *App) answerSnapshot(camera string) ([]byte, bool) {
	svc := a.thumbs.svc
	if !svc.Recording(camera) {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r thumbs.SnapshotReply
	snap, err := svc.Snapshot(ctx, camera)
	if err != nil {
		r.Error = err.Error()
	} else {
		r = thumbs.SnapshotReply{Key: snap.Key, TsMs: snap.Time.UnixMilli(), Width: snap.Width, Height: snap.Height}
	}
	data, _ := json.Marshal(r)
	return data, true
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
	counter := func(name, help string, f func(thumbs.Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(svc.Stats()) })
	}
	images := func(kind string, f func(thumbs.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_thumbnail_images_total", Help: "Images stored, by kind (minute, hourly, snapshot).",
			ConstLabels: prometheus.Labels{"kind": kind},
		}, func() float64 { return float64(f(svc.Stats())) })
	}
	a.reg.MustRegister(
		images("minute", func(s thumbs.Stats) uint64 { return s.Minute }),
		images("hourly", func(s thumbs.Stats) uint64 { return s.Hourly }),
		images("snapshot", func(s thumbs.Stats) uint64 { return s.Snapshots }),
		counter("vigia_thumbnail_dropped_total", "Thumbnails not made because the queue was full.",
			func(s thumbs.Stats) float64 { return float64(s.Dropped) }),
		counter("vigia_thumbnail_decode_errors_total", "Keyframes that could not be decoded or encoded.",
			func(s thumbs.Stats) float64 { return float64(s.DecodeErrors) }),
		counter("vigia_thumbnail_store_errors_total", "Images that could not be stored.",
			func(s thumbs.Stats) float64 { return float64(s.StoreErrors) }),
		counter("vigia_thumbnail_unreadable_keyframes_total", "Keyframes a snapshot could not read back from the spool file because their segment had ended.",
			func(s thumbs.Stats) float64 { return float64(s.Unreadable) }),
		counter("vigia_thumbnail_cpu_seconds_total", "CPU time the decoder processes spent decoding, scaling and encoding the images made.",
			func(s thumbs.Stats) float64 { return s.CPU.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_thumbnail_queue_length", Help: "Thumbnails waiting for a worker."},
			func() float64 { return float64(svc.Stats().Queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_thumbnail_available", Help: "1 when this node can decode video (cgo, decoder processes), 0 otherwise."},
			func() float64 {
				if svc.Available() {
					return 1
				}
				return 0
			}),
	)
}

func (a *App) registerDecoderMetrics() {
	pool := a.decoders
	restarts := func(reason string) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_decoder_restarts_total", Help: "Decoder processes killed and replaced, by reason (crash, memory, timeout, protocol, canceled, exited).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(pool.Stats().Restarts[reason]) })
	}
	for _, r := range decodeproc.Reasons {
		a.reg.MustRegister(restarts(r))
	}
	a.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "vigia_decoder_requests_total", Help: "Requests a decoder process answered (pictures and errors it reported)."},
			func() float64 { return float64(pool.Stats().Requests) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "vigia_decoder_start_failures_total", Help: "Decoder processes that did not start."},
			func() float64 { return float64(pool.Stats().StartFailures) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "vigia_decoder_cpu_seconds_total", Help: "CPU time of the decoder processes, exited ones included."},
			func() float64 { return pool.Stats().CPU.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_decoder_processes", Help: "Decoder processes running."},
			func() float64 { return float64(pool.Stats().Processes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_decoder_resident_bytes", Help: "Resident set of the decoder processes together."},
			func() float64 { return float64(pool.ResidentBytes()) }),
	)
}
