package bus

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// testWait is the deadline for polled conditions; conditions normally hold
// much sooner.
const testWait = 30 * time.Second

// testOptions returns embedded-server options with a free port and a
// per-test store directory.
func testOptions(t *testing.T) Options {
	t.Helper()
	return Options{
		Listen:        "127.0.0.1:0",
		StoreDir:      t.TempDir(),
		Name:          "vigia-test",
		ReconnectWait: 50 * time.Millisecond,
	}
}

// openTest opens a Bus and closes it when the test ends.
func openTest(t *testing.T, opts Options) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	b, err := Open(ctx, opts, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// publish queues messages through an Outbox of its own (enqueue) and waits
// until they are stored; it returns enqueue's error.
func publish(t *testing.T, b *Bus, enqueue func(o *Outbox) error) error {
	t.Helper()
	o := NewOutbox(b, 0, zaptest.NewLogger(t))
	defer o.Close()
	if err := enqueue(o); err != nil {
		return err
	}
	if err := o.Flush(testCtx(t)); err != nil {
		t.Fatalf("flush: %v", err)
	}
	return nil
}

// publishEvent publishes e as an event producer does: JSON on
// EventSubject with its id as message id.
func publishEvent(t *testing.T, b *Bus, e Event) {
	t.Helper()
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := publish(t, b, func(o *Outbox) error { return o.Enqueue(EventSubject(e.Camera, e.Type), data, e.ID) }); err != nil {
		t.Fatal(err)
	}
}

// testCtx returns a context bounded by testWait.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	return ctx
}

// streamNotices returns the segment notices stored in StreamSegments, in order.
func streamNotices(t *testing.T, b *Bus) []SegmentNotice {
	t.Helper()
	ctx := testCtx(t)
	s, err := b.JetStream().Stream(ctx, StreamSegments)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	var out []SegmentNotice
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("get msg %d: %v", seq, err)
		}
		var n SegmentNotice
		if err := json.Unmarshal(m.Data, &n); err != nil {
			t.Fatalf("decode msg %d: %v", seq, err)
		}
		out = append(out, n)
	}
	return out
}
