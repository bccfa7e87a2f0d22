package bus

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

func TestGapDedupe(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	g := status.Gap{Camera: "7", StartMs: 1704164400000, EndMs: 1704164405000, Cause: status.CauseCameraOffline, Node: "n1"}
	const key = "rec/7/2024/01/02/03/1704164400000_5000_camera_offline.gap"
	for range 2 {
		if err := publish(t, b, func(o *Outbox) error { return o.EnqueueGap(g, key) }); err != nil {
			t.Fatal(err)
		}
	}
	o := NewOutbox(b, 0, zaptest.NewLogger(t))
	defer o.Close()
	open := g
	open.EndMs = 0
	if err := o.EnqueueGap(open, "rec/7/2024/01/02/03/1704164400000_0_camera_offline.gap"); err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := b.JetStream().Stream(ctx, StreamGaps)
	if err != nil {
		t.Fatal(err)
	}
	var got []status.Gap
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != GapSubject("7") {
			t.Errorf("subject %q", m.Subject)
		}
		var x status.Gap
		if err := json.Unmarshal(m.Data, &x); err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	if len(got) != 2 || got[0] != g || got[1] != open {
		t.Fatalf("stream holds %+v, want the closed record once and the open one", got)
	}
}

func TestGapInvalid(t *testing.T) {
	b := openTest(t, testOptions(t))
	ok := status.Gap{Camera: "7", StartMs: 1000, EndMs: 2000, Cause: status.CauseRTPLoss}
	for name, tc := range map[string]struct {
		g   status.Gap
		key string
	}{
		"camera":    {status.Gap{Camera: "a.b", StartMs: 1000, Cause: status.CauseRTPLoss}, "k"},
		"no key":    {ok, ""},
		"cause":     {status.Gap{Camera: "7", StartMs: 1000, Cause: "made_up"}, "k"},
		"no start":  {status.Gap{Camera: "7", Cause: status.CauseRTPLoss}, "k"},
		"reversed":  {status.Gap{Camera: "7", StartMs: 2000, EndMs: 1000, Cause: status.CauseRTPLoss}, "k"},
		"retention": {status.Gap{Camera: "7", StartMs: 1000, Cause: "nothing"}, "k"},
	} {
		if err := publish(t, b, func(o *Outbox) error { return o.EnqueueGap(tc.g, tc.key) }); err == nil {
			t.Errorf("%s: published %+v", name, tc.g)
		}
	}
}

func TestWatchSegments(t *testing.T) {
	b := openTest(t, testOptions(t))
	var mu sync.Mutex
	var got []SegmentNotice
	stop, err := b.WatchSegments(func(n SegmentNotice) {
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	n := SegmentNotice{Camera: "7", Key: "rec/7/2024/01/02/03/1704164400000_60000.mp4", StartMs: 1704164400000, DurMs: 60000, Size: 9000, InitSize: 812}
	// A notice that does not decode is skipped; the valid one after it
	// (same connection, so in order) is delivered.
	if err := b.Conn().Publish(SegmentSubject("7"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if err := publish(t, b, func(o *Outbox) error { return o.EnqueueSegment(n) }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testWait, "a notice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != n {
		t.Fatalf("watched %+v, want %+v", got, n)
	}
}
