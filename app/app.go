// Package app wires Vigia's components together for the commands in
// cmd/vigia: it builds them from the configuration, connects their hooks,
// serves the node's HTTP endpoints and closes everything in order. Nothing
// imports it but cmd.
package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp"
	"github.com/vigia/vigia/live"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/recorder"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
)

// Mode says which parts a process runs.
type Mode struct {
	// Name of the command, for logs ("serve", "recorder").
	Name string

	// Recorder runs cameras.
	Recorder bool

	// Synth starts the configured synthetic cameras and records them.
	Synth bool

	// Cluster joins the recorder cluster: cameras come from the NATS
	// registry (static and synthetic cameras are put there) and are
	// recorded by the node that holds their lease. Without it, static
	// cameras are recorded directly.
	Cluster bool

	// OnSegmentStored, optional, is called after each segment is stored,
	// with the time from its end in the spool to the object stored.
	OnSegmentStored func(seg segmenter.Segment, latency time.Duration)
}

// App is a running Vigia process.
type App struct {
	cfg  *config.Config
	mode Mode
	log  *zap.Logger

	secret  []byte
	store   storage.Store
	media   http.Handler // fs signed URLs, nil for s3
	bus     *bus.Bus
	outbox  *bus.Outbox
	reg     *prometheus.Registry
	metrics *metrics.Recorder
	spool   *segmenter.Spool
	rec     *recorder.Recorder
	rtmp    *rtmp.Server // RTMP push server, with the recorder
	synth   *synth.Server
	live    *live.Server
	node    *cluster.Node
	static  []ingest.Camera

	listener net.Listener
	http     *http.Server
	httpDone chan struct{}
}

// New builds and starts every component of mode. On error, what was started
// is closed again.
func New(ctx context.Context, cfg *config.Config, mode Mode, log *zap.Logger) (a *App, err error) {
	a = &App{cfg: cfg, mode: mode, log: log, reg: metrics.NewRegistry()}
	defer func() {
		if err != nil {
			a.Close()
			a = nil
		}
	}()
	if cfg.NodeID == "" {
		cfg.NodeID, _ = os.Hostname()
	}
	if a.secret, err = loadSecret(cfg.Security.Secret, cfg.DataDir); err != nil {
		return a, err
	}
	if err = a.listen(); err != nil {
		return a, err
	}
	if err = a.openStorage(ctx); err != nil {
		return a, err
	}
	if a.bus, err = bus.Open(ctx, bus.Options{
		URL: cfg.NATS.URL, Token: cfg.NATS.Token, Listen: cfg.NATS.Listen,
		StoreDir: cfg.NATS.StoreDir, Name: "vigia-" + cfg.NodeID,
	}, log.With(zap.String("component", "bus"))); err != nil {
		return a, fmt.Errorf("nats: %w", err)
	}
	a.outbox = bus.NewOutbox(a.bus, 0, log.With(zap.String("component", "outbox")))
	if mode.Recorder {
		if err = a.startRecorder(); err != nil {
			return a, err
		}
	}
	a.serveHTTP()
	if mode.Synth && cfg.Synth.Cameras > 0 {
		if err = a.startSynth(); err != nil {
			return a, err
		}
	}
	if mode.Recorder {
		for _, c := range cfg.Cameras {
			a.static = append(a.static, ingest.Camera{ID: c.ID, URL: c.URL, Transport: c.Transport, Sound: c.Sound == 1, Trusted: true})
		}
		if mode.Cluster {
			if err = a.startCluster(ctx); err != nil {
				return a, err
			}
		} else {
			for _, c := range a.static {
				if err = a.rec.Add(c); err != nil {
					return a, fmt.Errorf("camera %s: %w", c.ID, err)
				}
			}
		}
	}
	return a, nil
}

// URL returns the base URL of the node's HTTP interface.
func (a *App) URL() string {
	if a.cfg.HTTP.PublicURL != "" {
		return a.cfg.HTTP.PublicURL
	}
	return "http://" + a.listener.Addr().String()
}

// Store returns the object store.
func (a *App) Store() storage.Store { return a.store }

// Bus returns the NATS connection.
func (a *App) Bus() *bus.Bus { return a.bus }

// Recorder returns the camera recorder, nil when the mode has none.
func (a *App) Recorder() *recorder.Recorder { return a.rec }

func (a *App) listen() error {
	l, err := net.Listen("tcp", a.cfg.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("http.addr: %w", err)
	}
	a.listener = l
	if pu := a.cfg.HTTP.PublicURL; pu == "" || strings.HasSuffix(pu, ":0") {
		// A port chosen at run time: advertise the real one.
		a.cfg.HTTP.PublicURL = "http://" + l.Addr().String()
	}
	return nil
}

func (a *App) startRecorder() error {
	cfg := a.cfg
	var err error
	a.spool, err = segmenter.NewSpool(segmenter.SpoolConfig{
		Dir:      cfg.Recording.SpoolDir,
		MaxBytes: int64(cfg.Recording.SpoolMaxBytes),
		Workers:  cfg.Recording.UploadConcurrency,
		Upload:   a.uploadSegment,
		OnStored: a.segmentStored,
		OnUploadError: func(seg segmenter.Segment, err error) {
			a.metrics.SegmentsFailed.Inc()
			a.rec.SegmentFailed(seg.Camera)
		},
		OnDropped: func(seg segmenter.Segment, reason string) {
			a.metrics.SegmentsDropped.WithLabelValues(reason).Inc()
		},
		Log: a.log.With(zap.String("component", "spool")),
	})
	if err != nil {
		return err
	}
	a.metrics = metrics.NewRecorder(a.reg,
		func() float64 { return float64(a.spool.Bytes()) },
		func() float64 { return a.spool.OldestAge().Seconds() })
	decodeErr := func(error) { a.metrics.DecodeErrors.Inc() }
	a.live = live.New(live.Config{Secret: a.secret, Registerer: a.reg, Log: a.log.With(zap.String("component", "live"))})
	a.rec = recorder.New(recorder.Config{
		NodeID: cfg.NodeID,
		Spool:  a.spool,
		Drivers: a.ingestDrivers(decodeErr),
		Source: ingest.SourceConfig{
			ReadTimeout:          time.Duration(cfg.Ingest.ReadTimeout),
			DefaultTransport:     cfg.Ingest.DefaultTransport,
			AllowPrivateNetworks: cfg.Ingest.AllowPrivateNetworks,
		},
		ConnectRate:      cfg.Ingest.ConnectRate,
		BackoffMax:       time.Duration(cfg.Ingest.BackoffMax),
		PermanentRetry:   time.Duration(cfg.Ingest.PermanentRetry),
		SegmentDuration:  time.Duration(cfg.Recording.SegmentDuration),
		FragmentDuration: time.Duration(cfg.Recording.FragmentDuration),
		OnStatus:         a.publishStatus,
		Consumers:        []recorder.ConsumerFactory{a.live.Consumer()},
		Metrics:          a.metrics,
		Log:              a.log.With(zap.String("component", "recorder")),
	})
	return a.spool.Start()
}

// uploadSegment stores a spooled segment and checks what was stored.
func (a *App) uploadSegment(ctx context.Context, seg segmenter.Segment, body io.ReadSeeker) error {
	key := storage.SegmentKey(seg.Camera, seg.Start, seg.Duration)
	if key == "" {
		return fmt.Errorf("segment of camera %q has no valid key", seg.Camera)
	}
	md := map[string]string{
		"codec":     string(seg.Codec),
		"width":     strconv.Itoa(seg.Width),
		"height":    strconv.Itoa(seg.Height),
		"init-size": strconv.FormatInt(seg.InitSize, 10),
		"frames":    strconv.Itoa(seg.Frames),
		"node":      a.cfg.NodeID,
	}
	if seg.AudioCodec != "" {
		md["audio-codec"] = string(seg.AudioCodec)
	}
	if seg.Recovered {
		md["recovered"] = "1"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := a.store.Put(ctx, key, body, seg.Size, storage.PutOptions{ContentType: "video/mp4", Metadata: md}); err != nil {
		return err
	}
	obj, err := a.store.Stat(ctx, key)
	if err != nil {
		return fmt.Errorf("verify %s: %w", key, err)
	}
	if obj.Size != seg.Size {
		return fmt.Errorf("verify %s: stored %d bytes, want %d", key, obj.Size, seg.Size)
	}
	return nil
}

func (a *App) segmentStored(seg segmenter.Segment, latency time.Duration) {
	a.metrics.SegmentsWritten.Inc()
	a.metrics.UploadLatency.Observe(latency.Seconds())
	a.rec.SegmentStored(seg.Camera)
	if a.mode.OnSegmentStored != nil {
		a.mode.OnSegmentStored(seg, latency)
	}
	n := bus.SegmentNotice{
		Camera: seg.Camera, Key: storage.SegmentKey(seg.Camera, seg.Start, seg.Duration),
		StartMs: seg.StartMs(), DurMs: seg.DurationMs(), Size: seg.Size,
	}
	if err := a.outbox.EnqueueSegment(n); err != nil {
		a.metrics.StatusPublishFail.Inc()
	}
}

func (a *App) publishStatus(s status.Status) {
	if err := a.outbox.EnqueueStatus(s); err != nil {
		if a.metrics != nil {
			a.metrics.StatusPublishFail.Inc()
		}
		a.log.Debug("status not queued", zap.String("camera", s.Camera), zap.Error(err))
	}
}

// Close stops everything in order: no new HTTP requests, cameras stopped and
// their open segments finished, spooled segments uploaded (for up to 20 s;
// the rest stays in the spool for the next start), NATS messages flushed.
func (a *App) Close() {
	if a.httpDone != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_ = a.http.Shutdown(ctx)
		cancel()
		<-a.httpDone
	} else if a.listener != nil {
		_ = a.listener.Close()
	}
	if a.node != nil {
		a.node.Close()
	}
	if a.rec != nil {
		a.rec.Close()
	}
	if a.rtmp != nil {
		a.rtmp.Close()
	}
	if a.synth != nil {
		a.synth.Close()
	}
	if a.spool != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := a.spool.Drain(ctx); err != nil {
			a.log.Warn("segments left in the spool for the next start", zap.Int("segments", a.spool.Pending()))
		}
		cancel()
		a.spool.Close()
	}
	if a.outbox != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_ = a.outbox.Flush(ctx)
		cancel()
		a.outbox.Close()
	}
	if a.bus != nil {
		a.bus.Close()
	}
}

// Run builds the app, runs it until ctx ends, then closes it.
func Run(ctx context.Context, cfg *config.Config, mode Mode, log *zap.Logger, ready func(*App)) error {
	a, err := New(ctx, cfg, mode, log)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(a)
	}
	<-ctx.Done()
	log.Info("shutting down")
	a.Close()
	return nil
}
