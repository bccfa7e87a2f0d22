package recorder

import (
	"context"
	"net/url"
	"strings"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
)

// run is one run of a camera with fixed recorded settings: a supervised
// source feeding the pipeline goroutine. Its owner starts and stops it.
type run struct {
	o    *owner
	spec ingest.Camera

	cancel  context.CancelFunc
	supDone chan struct{}
	pipe    *pipeline
	pipDone chan struct{}
	// w is the run's segment writer, owned by the pipeline until pipDone
	// is closed.
	w *segmenter.Writer
}

func parseScheme(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ingest.Permanent(ingest.ReasonBadURL, ingest.ErrUnsupportedScheme)
	}
	return strings.ToLower(u.Scheme), nil
}

// startRun starts recording spec; its first segment starts no earlier than
// notBefore.
func (o *owner) startRun(spec ingest.Camera, drv ingest.Driver) *run {
	r := o.r
	ctx, cancel := context.WithCancel(context.Background())
	ru := &run{
		o:       o,
		spec:    spec,
		cancel:  cancel,
		supDone: make(chan struct{}),
		pipDone: make(chan struct{}),
	}
	ru.w = segmenter.NewWriter(segmenter.WriterConfig{
		Camera:           spec.ID,
		SegmentDuration:  r.cfg.SegmentDuration,
		Phase:            segmenter.SegmentPhase(spec.ID, r.cfg.SegmentDuration),
		FragmentDuration: r.cfg.FragmentDuration,
		MaxBytes:         r.cfg.MaxSegmentBytes,
		Spool:            r.cfg.Spool,
		NotBefore:        o.lastEnd,
		OnDrop:           o.dropped,
		OnGap:            o.gaps.hole,
		Log:              o.log,
	})
	ru.pipe = newPipeline(ctx, o, r.cfg.QueueSize, ru.w)
	ru.pipe.gaps = &o.gaps
	for _, f := range r.cfg.Consumers {
		if cons := f(spec.ID); cons != nil {
			ru.pipe.consumers = append(ru.pipe.consumers, cons)
		}
	}
	sup := ingest.NewSupervisor(ingest.SupervisorConfig{
		Camera:         spec.ID,
		NewSource:      func() (ingest.Source, error) { return drv(spec, r.cfg.Source) },
		Sink:           ru.pipe,
		OnStatus:       func(c status.Code, err error) { o.setCode(c, err); ru.pipe.sourceDown(c, err) },
		OnPanic:        func(any) { o.panicked() },
		OnAttempt:      o.attempt,
		OnProbe:        o.probed,
		Limiter:        r.limiter,
		Handshakes:     r.handshakes,
		BackoffMin:     r.cfg.BackoffMin,
		BackoffMax:     r.cfg.BackoffMax,
		PermanentRetry: r.cfg.PermanentRetry,
		Log:            o.log,
	})
	go func() {
		defer close(ru.pipDone)
		ru.pipe.run()
	}()
	go func() {
		defer close(ru.supDone)
		sup.Run(ctx)
	}()
	return ru
}

// stop ends the source, then lets the pipeline finish the open segment,
// and returns the end of the run's last segment.
func (ru *run) stop() {
	ru.cancel()
	<-ru.supDone
	ru.pipe.q.Close()
	<-ru.pipDone
}
