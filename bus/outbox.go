package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
)

// Outbox timing.
const (
	// outboxAttemptTimeout bounds one JetStream publish attempt.
	outboxAttemptTimeout = 5 * time.Second
	// outboxMinBackoff and outboxMaxBackoff bound the pause between attempts
	// while NATS is unreachable or failing.
	outboxMinBackoff = 50 * time.Millisecond
	outboxMaxBackoff = 2 * time.Second
	// outboxDropLogEvery is how often (in drops) a drop is logged after the first.
	outboxDropLogEvery = 1000
)

// DefaultOutboxMax is the queue bound NewOutbox uses when max is not positive.
const DefaultOutboxMax = 10000

// outboxItem is one queued JetStream publish.
type outboxItem struct {
	subject string
	data    []byte
	msgID   string // Nats-Msg-Id; empty for none
	notify  string // core subject that gets data after the publish is stored; empty for none
}

// Outbox queues JetStream publishes in memory and sends them in order from
// one goroutine, so callers never wait on NATS. While NATS is unreachable the
// queue grows up to its bound, then the oldest message is dropped (counted
// by Dropped). Messages with a message id are stored once even when an
// attempt is retried after a reconnect. A message the server rejects for
// good (a JetStream 4xx error, such as no stream for the subject) is
// discarded and counted by Failed.
//
// The goroutine starts in NewOutbox and exits in Close.
type Outbox struct {
	b   *Bus
	log *zap.Logger
	max int

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // capacity 1: new items queued

	mu       sync.Mutex
	queue    []outboxItem
	inflight bool          // the run goroutine holds an item taken from queue
	idle     chan struct{} // closed while the queue is empty and nothing is in flight

	published atomic.Uint64
	dropped   atomic.Uint64
	failed    atomic.Uint64
}

// NewOutbox returns a running Outbox that publishes through b and holds at
// most max messages (DefaultOutboxMax when max <= 0). Close it before b.
func NewOutbox(b *Bus, max int, log *zap.Logger) *Outbox {
	if max <= 0 {
		max = DefaultOutboxMax
	}
	if log == nil {
		log = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	idle := make(chan struct{})
	close(idle)
	o := &Outbox{
		b:      b,
		log:    log,
		max:    max,
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		idle:   idle,
	}
	go o.run()
	return o
}

// Enqueue queues a JetStream publish of data on subject with Nats-Msg-Id
// msgID (empty for none). subject must belong to StreamEvents,
// StreamSegments, StreamGaps or StreamJobs. It never blocks on NATS.
func (o *Outbox) Enqueue(subject string, data []byte, msgID string) error {
	if !streamSubject(subject) {
		return fmt.Errorf("outbox: %w: subject %q is not in a vigia stream", ErrInvalidMessage, subject)
	}
	return o.push(outboxItem{subject: subject, data: data, msgID: msgID})
}

// EnqueueSegment queues n on SegmentSubject(n.Camera) with its Key as
// message id, so a retry within DuplicateWindow is stored once.
func (o *Outbox) EnqueueSegment(n SegmentNotice) error {
	data, err := marshalSegment(n)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return o.push(outboxItem{subject: SegmentSubject(n.Camera), data: data, msgID: n.Key})
}

// EnqueueGap queues gap record g on GapSubject(g.Camera), with key (the
// record's storage key, storage.GapKey) as its message id.
func (o *Outbox) EnqueueGap(g status.Gap, key string) error {
	data, err := marshalGap(g, key)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return o.push(outboxItem{subject: GapSubject(g.Camera), data: data, msgID: key})
}

// EnqueueStatus queues s (an empty s.Text filled from s.Code) as a put into
// BucketCameraStatus under s.Camera, then, once stored, the same JSON on
// StatusSubject(s.Camera).
func (o *Outbox) EnqueueStatus(s status.Status) error {
	data, err := marshalStatus(s)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return o.push(outboxItem{
		subject: kvSubject(BucketCameraStatus, s.Camera),
		data:    data,
		notify:  StatusSubject(s.Camera),
	})
}

// push appends it, dropping the oldest queued item when full.
func (o *Outbox) push(it outboxItem) error {
	if o.ctx.Err() != nil {
		return fmt.Errorf("outbox: %w", ErrClosed)
	}
	o.mu.Lock()
	var dropped outboxItem
	drop := len(o.queue) >= o.max
	if drop {
		dropped = o.queue[0]
		o.queue[0] = outboxItem{}
		o.queue = o.queue[1:]
	}
	o.queue = append(o.queue, it)
	o.markBusy()
	o.mu.Unlock()

	if drop {
		if n := o.dropped.Add(1); n == 1 || n%outboxDropLogEvery == 0 {
			o.log.Warn("outbox full, dropped oldest message",
				zap.String("subject", dropped.subject), zap.Uint64("dropped_total", n), zap.Int("max", o.max))
		}
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

// markBusy replaces a closed idle channel with an open one. o.mu held.
func (o *Outbox) markBusy() {
	select {
	case <-o.idle:
		o.idle = make(chan struct{})
	default:
	}
}

// Len returns the number of messages not yet stored, including one in flight.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.queue)
	if o.inflight {
		n++
	}
	return n
}

// Published returns how many messages the Outbox has stored.
func (o *Outbox) Published() uint64 { return o.published.Load() }

// Dropped returns how many queued messages were dropped because the Outbox was full.
func (o *Outbox) Dropped() uint64 { return o.dropped.Load() }

// Failed returns how many messages the server rejected for good.
func (o *Outbox) Failed() uint64 { return o.failed.Load() }

// Flush waits until every queued message has been stored (or discarded), or
// ctx ends.
func (o *Outbox) Flush(ctx context.Context) error {
	o.mu.Lock()
	idle := o.idle
	o.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-o.done:
		return fmt.Errorf("outbox flush: %w", ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("outbox flush: %w", ctx.Err())
	}
}

// Close stops the goroutine and waits for it. Messages still queued are
// discarded (logged); call Flush first to send them.
func (o *Outbox) Close() {
	o.cancel()
	<-o.done
	if n := o.Len(); n > 0 {
		o.log.Warn("outbox closed with messages unsent", zap.Int("unsent", n))
	}
}

// run sends queued items in order until Close.
func (o *Outbox) run() {
	defer close(o.done)
	backoff := outboxMinBackoff
	for {
		it, ok := o.take()
		if !ok {
			select {
			case <-o.wake:
				continue
			case <-o.ctx.Done():
				return
			}
		}
		for {
			err := o.send(it)
			if err == nil {
				o.published.Add(1)
				backoff = outboxMinBackoff
				break
			}
			if permanent(err) {
				o.failed.Add(1)
				o.log.Error("outbox message rejected, discarded", zap.String("subject", it.subject), zap.Error(err))
				break
			}
			o.log.Debug("outbox publish failed, retrying", zap.String("subject", it.subject), zap.Error(err))
			if !o.sleep(backoff) {
				return // it stays counted by Len as unsent
			}
			backoff = min(backoff*2, outboxMaxBackoff)
		}
		o.finish()
	}
}

// take moves the oldest queued item in flight.
func (o *Outbox) take() (outboxItem, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queue) == 0 {
		return outboxItem{}, false
	}
	it := o.queue[0]
	o.queue[0] = outboxItem{}
	o.queue = o.queue[1:]
	if len(o.queue) == 0 {
		o.queue = nil // let the backing array go
	}
	o.inflight = true
	return it, true
}

// finish clears the in-flight item and closes idle when nothing is left.
func (o *Outbox) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inflight = false
	if len(o.queue) == 0 {
		select {
		case <-o.idle:
		default:
			close(o.idle)
		}
	}
}

// send makes one publish attempt for it.
func (o *Outbox) send(it outboxItem) error {
	if err := o.b.usable(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(o.ctx, outboxAttemptTimeout)
	defer cancel()
	var opts []jetstream.PublishOpt
	if it.msgID != "" {
		opts = append(opts, jetstream.WithMsgID(it.msgID))
	}
	if _, err := o.b.js.Publish(ctx, it.subject, it.data, opts...); err != nil {
		return err
	}
	if it.notify != "" {
		if err := o.b.nc.Publish(it.notify, it.data); err != nil {
			o.log.Debug("outbox notify failed", zap.String("subject", it.notify), zap.Error(err))
		}
	}
	return nil
}

// sleep waits d or until Close; it reports false on Close.
func (o *Outbox) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-o.ctx.Done():
		return false
	}
}

// permanent reports whether err is a server rejection that retrying will not
// change (a JetStream API error below 500).
func permanent(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code >= 400 && apiErr.Code < 500
	}
	return false
}

// streamSubject reports whether subject is a concrete subject stored by
// StreamEvents, StreamSegments, StreamGaps or StreamJobs.
func streamSubject(subject string) bool {
	if strings.ContainsAny(subject, "*> \t\r\n") {
		return false
	}
	if subject == SubjectJobsExport {
		return true
	}
	for _, prefix := range []string{SubjectEventsPrefix, SubjectSegmentsPrefix, SubjectGapsPrefix} {
		rest, ok := strings.CutPrefix(subject, prefix)
		if ok && rest != "" && !strings.HasPrefix(rest, ".") && !strings.HasSuffix(rest, ".") && !strings.Contains(rest, "..") {
			return true
		}
	}
	return false
}
