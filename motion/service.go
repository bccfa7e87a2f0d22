package motion

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/stream"
)

// Config configures a Service.
type Config struct {
	// Settings returns a camera's settings; it is called from the camera's
	// detection goroutine when it starts. It defaults to DefaultSettings
	// for every camera.
	Settings func(camera string) Settings

	// Publish is called with each finished event, from the camera's
	// detection goroutine (a slow Publish delays only that camera's
	// detection; its queue drops units meanwhile). Required.
	Publish func(ev Event) error

	// Queue is the number of units waiting for a camera's detector; past it
	// units are dropped and counted, and detection resumes at the next
	// keyframe (the frames before it are dropped and counted too). It defaults to 256 (17 s at 15 fps). A queued unit is a
	// frame of about 100 bytes (see Consumer.Unit), not the unit.
	Queue int

	// Decoder decodes what the detectors analyse: a *decodeproc.Pool,
	// shared with the thumbnails. Without one that is Available, motion
	// detection is unavailable.
	Decoder Decoder

	// Log is the component's logger. It defaults to a no-op logger.
	Log *zap.Logger
}

// Service runs a Detector per camera, each in its own goroutine fed by a
// bounded queue, so detection never blocks a camera's pipeline.
type Service struct {
	cfg       Config
	available bool

	wg sync.WaitGroup

	events     atomic.Uint64
	failed     atomic.Uint64
	dropped    atomic.Uint64
	looks      atomic.Uint64
	decoded    atomic.Uint64
	unreadable atomic.Uint64
	cpuNanos   atomic.Int64
}

// Stats are the Service's counters since it started.
type Stats struct {
	// Events counts events published; PublishErrors those Publish refused.
	Events, PublishErrors uint64
	// Dropped counts units not analysed because a camera's queue was full
	// (or after that, before the next keyframe).
	Dropped uint64
	// Looks counts triggers (decoding started); Decoded the frames decoded.
	Looks, Decoded uint64
	// Unreadable counts looks and keyframe checks given up because a frame
	// could no longer be read back from the spool file: its segment had
	// ended (a detector far behind its camera, at a segment's end).
	Unreadable uint64
	// CPU is the CPU time the decoder processes spent on the detectors'
	// requests (decoding, scaling the luma, the event images); the
	// comparison with the background runs in this process and is not
	// included.
	CPU time.Duration
}

// NewService returns a Service. Without video decoding (a build without
// cgo, no decoder) every Consumer is nil.
func NewService(cfg Config) *Service {
	if cfg.Settings == nil {
		cfg.Settings = func(string) Settings { return DefaultSettings() }
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Service{cfg: cfg, available: cfg.Decoder != nil && cfg.Decoder.Available()}
}

// Available reports whether the Service can decode video.
func (s *Service) Available() bool { return s.available }

// Stats returns the counters.
func (s *Service) Stats() Stats {
	return Stats{
		Events: s.events.Load(), PublishErrors: s.failed.Load(), Dropped: s.dropped.Load(),
		Looks: s.looks.Load(), Decoded: s.decoded.Load(), Unreadable: s.unreadable.Load(),
		CPU: time.Duration(s.cpuNanos.Load()),
	}
}

// Close waits for every camera's goroutine to exit; the recorder closes
// the consumers first.
func (s *Service) Close() { s.wg.Wait() }

// item is one message from the pipeline to a camera's detector: a video
// frame, the start of a new run, or both (a run whose start found the
// queue full starts with its first frame queued).
type item struct {
	f     *frame      // nil: a new run alone
	codec media.Codec // with run: the run's video codec ("": none)
	run   bool
}

var _ stream.Consumer = (*Consumer)(nil)

// Consumer feeds one camera's detector (a stream.Consumer).
type Consumer struct {
	s       *Service
	camera  string
	q       *stream.Queue[item]
	video   int
	codec   media.Codec // the run's video codec
	pending bool        // the run's start is not queued yet
	inGOP   bool        // a keyframe was queued since the last new run
	done    chan struct{}
}

// Consumer starts camera's detector and returns its consumer, or nil when
// the Service cannot decode video.
func (s *Service) Consumer(camera string) *Consumer {
	if !s.available {
		return nil
	}
	c := &Consumer{s: s, camera: camera, q: stream.NewQueue(stream.QueueConfig[item]{Size: s.cfg.Queue}),
		video: -1, done: make(chan struct{})}
	s.wg.Add(1)
	go c.run()
	return c
}

// Tracks starts a new run of the source. The run's start is queued never
// after a unit of the run: when the queue is full, it goes with the run's
// first frame queued.
func (c *Consumer) Tracks(tracks []*media.Track) {
	c.video, c.codec, c.inGOP = -1, "", false
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			c.video, c.codec = i, t.Codec
			break
		}
	}
	c.pending = !c.put(item{codec: c.codec, run: true}, stream.Other)
}

// Unit queues a video unit; it never blocks. What is queued is a frame
// (time, size, keyframe or not, u.Stored: about 100 bytes), not the unit,
// whose memory the pipeline reuses once Unit returns: the detector needs
// the sizes of every frame but the NAL units only of the frames it
// decodes, which it reads back from the spool file. A unit the segmenter
// did not store (rare: no keyframe or parameter sets yet, a spool write
// error) has its NAL units copied, unless no keyframe was queued since the
// last new run (the detector decodes nothing before one). After a frame is
// dropped, frames are dropped until the next keyframe.
func (c *Consumer) Unit(u *media.Unit) {
	if u.Track != c.video || c.video < 0 || len(u.NALUs) == 0 {
		return
	}
	f := newFrame(u, u.Key || c.inGOP)
	it := item{f: &f}
	if c.pending {
		it.codec, it.run = c.codec, true
	}
	if !c.put(it, stream.KindOf(u, true)) {
		return
	}
	c.pending = false
	if u.Key {
		c.inGOP = true
	}
}

// put queues it, or counts it dropped; it reports whether it was queued.
func (c *Consumer) put(it item, kind stream.Kind) bool {
	if c.q.Put(it, kind, 0) == stream.Queued {
		return true
	}
	if n := c.s.dropped.Add(1); n == 1 || n%10000 == 0 {
		c.s.cfg.Log.Warn("motion queue full, units dropped", zap.String("camera", c.camera), zap.Uint64("dropped", n))
	}
	return false
}

// Close stops the camera's detector after the queued units; an open event
// is published if it lasted long enough.
func (c *Consumer) Close() {
	c.q.Close()
	<-c.done
}

// run is the camera's detection goroutine; it exits when the consumer is
// closed.
func (c *Consumer) run() {
	defer c.s.wg.Done()
	defer close(c.done)
	d := NewDetector(c.camera, c.s.cfg.Settings(c.camera), c.s.cfg.Decoder)
	var batch []stream.Entry[item]
	for {
		var ok bool
		batch, ok = c.q.Take(batch[:0])
		for _, e := range batch {
			c.publish(c.measure(d, e.Value, e.Gap))
			c.q.Done()
		}
		clear(batch)
		if !ok {
			break
		}
	}
	c.publish(d.Close())
}

// measure runs one item through the detector, after a loss of units when
// gap is set, and adds what it counted to the Service's totals.
func (c *Consumer) measure(d *Detector, it item, gap bool) []Event {
	looks, decoded, unreadable, cpu := d.looks, d.decoded, d.unreadable, d.cpu
	var evs []Event
	if it.run {
		evs = d.SetCodec(it.codec)
	} else if gap {
		d.Gap()
	}
	if it.f != nil {
		evs = append(evs, d.frame(*it.f)...)
	}
	c.s.cpuNanos.Add(int64(d.cpu - cpu))
	c.s.looks.Add(d.looks - looks)
	c.s.decoded.Add(d.decoded - decoded)
	c.s.unreadable.Add(d.unreadable - unreadable)
	return evs
}

func (c *Consumer) publish(evs []Event) {
	for _, ev := range evs {
		if err := c.s.cfg.Publish(ev); err != nil {
			c.s.failed.Add(1)
			c.s.cfg.Log.Warn("motion event not published", zap.String("camera", c.camera), zap.String("event", ev.ID), zap.Error(err))
			continue
		}
		c.s.events.Add(1)
	}
}
