package recorder

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
)

// camera is one running camera: supervisor and pipeline goroutines.
type camera struct {
	r    *Recorder
	spec ingest.Camera
	log  *zap.Logger

	cancel  context.CancelFunc
	supDone chan struct{}
	pipe    *pipeline
	pipDone chan struct{}
	// w is the camera's segment writer, owned by the pipeline until
	// pipDone is closed.
	w *segmenter.Writer

	mu sync.Mutex
	st status.Status
}

func parseScheme(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ingest.Permanent(ingest.ReasonBadURL, ingest.ErrUnsupportedScheme)
	}
	return strings.ToLower(u.Scheme), nil
}

func newCamera(r *Recorder, spec ingest.Camera, drv ingest.Driver) *camera {
	ctx, cancel := context.WithCancel(context.Background())
	c := &camera{
		r:       r,
		spec:    spec,
		log:     r.cfg.Log.With(zap.String("camera", spec.ID)),
		cancel:  cancel,
		supDone: make(chan struct{}),
		pipDone: make(chan struct{}),
		st: status.Status{
			Camera: spec.ID, Code: status.Offline, Text: status.Offline.Text(),
			Node: r.cfg.NodeID, Since: time.Now().UTC(),
		},
	}
	w := segmenter.NewWriter(segmenter.WriterConfig{
		Camera:           spec.ID,
		SegmentDuration:  r.cfg.SegmentDuration,
		FragmentDuration: r.cfg.FragmentDuration,
		Spool:            r.cfg.Spool,
		NotBefore:        r.takeEnd(spec.ID),
		OnDrop:           c.dropped,
		Log:              c.log,
	})
	c.w = w
	c.pipe = newPipeline(ctx, c, r.cfg.QueueSize, w)
	for _, f := range r.cfg.Consumers {
		if cons := f(spec.ID); cons != nil {
			c.pipe.consumers = append(c.pipe.consumers, cons)
		}
	}
	sup := ingest.NewSupervisor(ingest.SupervisorConfig{
		Camera:         spec.ID,
		NewSource:      func() (ingest.Source, error) { return drv(spec, r.cfg.Source) },
		Sink:           c.pipe,
		OnStatus:       c.setCode,
		OnPanic:        func(any) { c.panicked() },
		OnAttempt:      c.attempt,
		Limiter:        r.limiter,
		BackoffMin:     r.cfg.BackoffMin,
		BackoffMax:     r.cfg.BackoffMax,
		PermanentRetry: r.cfg.PermanentRetry,
		Log:            c.log,
	})
	c.publish()
	go func() {
		defer close(c.pipDone)
		c.pipe.run()
	}()
	go func() {
		defer close(c.supDone)
		sup.Run(ctx)
	}()
	return c
}

// stop ends the source, then lets the pipeline finish the open segment.
func (c *camera) stop() {
	c.cancel()
	<-c.supDone
	close(c.pipe.ch)
	<-c.pipDone
	c.r.NoteEnd(c.spec.ID, c.w.LastEnd())
}

func (c *camera) dropped(reason string) {
	if m := c.r.cfg.Metrics; m != nil {
		m.FramesDropped.WithLabelValues(reason).Inc()
	}
}

func (c *camera) panicked() {
	if m := c.r.cfg.Metrics; m != nil {
		m.Panics.Inc()
	}
}

func (c *camera) attempt() {
	if m := c.r.cfg.Metrics; m != nil {
		m.ConnectAttempts.Inc()
	}
}

func (c *camera) code() status.Code {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.Code
}

func (c *camera) snapshot() status.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

// redactErr returns err's text without the camera's password.
func (c *camera) redactErr(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if u, perr := url.Parse(c.spec.URL); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
}

func (c *camera) setCode(code status.Code, err error) {
	c.mu.Lock()
	prev := c.st.Code
	c.st.Code = code
	c.st.Text = code.Text()
	c.st.Since = time.Now().UTC()
	if err != nil {
		c.st.LastError = c.redactErr(err)
	} else if code == status.Online {
		c.st.LastError = ""
	}
	c.mu.Unlock()
	if prev == status.Online && code != status.Online {
		if m := c.r.cfg.Metrics; m != nil {
			m.Reconnects.Inc()
		}
	}
	c.r.statusChanged()
	c.publish()
}

func (c *camera) setDimensions(w, h int) {
	if w == 0 {
		return
	}
	c.mu.Lock()
	changed := c.st.Width != w || c.st.Height != h
	c.st.Width, c.st.Height = w, h
	c.st.ResolutionError = c.spec.PlanWidth > 0 && c.spec.PlanHeight > 0 &&
		w*h > c.spec.PlanWidth*c.spec.PlanHeight
	c.mu.Unlock()
	if changed {
		c.publish()
	}
}

func (c *camera) setRecordingError(v bool) {
	c.mu.Lock()
	changed := c.st.RecordingError != v
	c.st.RecordingError = v
	c.mu.Unlock()
	if changed {
		c.publish()
	}
}

func (c *camera) publish() {
	if c.r.cfg.OnStatus == nil {
		return
	}
	c.r.cfg.OnStatus(c.snapshot())
}
