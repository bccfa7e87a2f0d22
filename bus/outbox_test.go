package bus

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// restartableServer is a nats-server the test stops and starts again on the
// same port and store directory.
type restartableServer struct {
	t      *testing.T
	listen string
	dir    string
	srv    *server.Server
}

// startRestartable starts a server on a free port with a fresh store directory.
func startRestartable(t *testing.T) *restartableServer {
	t.Helper()
	rs := &restartableServer{t: t, listen: "127.0.0.1:0", dir: t.TempDir()}
	rs.start()
	addr := rs.srv.Addr().(*net.TCPAddr)
	rs.listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(addr.Port))
	t.Cleanup(rs.stop)
	return rs
}

func (rs *restartableServer) start() {
	rs.t.Helper()
	srv, err := startEmbedded(rs.listen, rs.dir, "", DefaultMaxConns, zaptest.NewLogger(rs.t).Named("server"))
	if err != nil {
		rs.t.Fatalf("start server: %v", err)
	}
	rs.srv = srv
}

func (rs *restartableServer) stop() {
	if rs.srv != nil {
		rs.srv.Shutdown()
		rs.srv.WaitForShutdown()
		rs.srv = nil
	}
}

func (rs *restartableServer) url() string { return "nats://" + rs.listen }

// notice returns the i-th test segment notice of camera 9.
func notice(i int) SegmentNotice {
	start := int64(1704164400000 + i*60000)
	return SegmentNotice{Camera: "9", Key: fmt.Sprintf("rec/9/2024/01/02/03/%d_60000.mp4", start), StartMs: start, DurMs: 60000, Size: int64(1000 + i)}
}

func TestOutboxAcrossRestart(t *testing.T) {
	rs := startRestartable(t)
	b := openTest(t, Options{URL: rs.url(), ReconnectWait: testOptions(t).ReconnectWait})
	o := NewOutbox(b, 100, zaptest.NewLogger(t))
	t.Cleanup(o.Close)

	const before, during = 5, 20
	for i := range before {
		if err := o.EnqueueSegment(notice(i)); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	if err := o.Flush(testCtx(t)); err != nil {
		t.Fatalf("flush before outage: %v", err)
	}

	rs.stop()
	testenv.WaitForNil(t, testWait, "disconnect noticed", func() error {
		if b.Conn().IsConnected() {
			return errors.New("still connected")
		}
		return nil
	})
	if err := b.PutSegmentEnd(testCtx(t), "7", SegmentEnd{EndMs: 1}); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("PutSegmentEnd while down = %v, want ErrNotConnected", err)
	}
	// A retry of an already stored notice, then new ones.
	if err := o.EnqueueSegment(notice(before - 1)); err != nil {
		t.Fatal(err)
	}
	for i := before; i < before+during; i++ {
		if err := o.EnqueueSegment(notice(i)); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	if err := o.EnqueueStatus(status.Status{Camera: "9", Code: status.Offline}); err != nil {
		t.Fatal(err)
	}
	if o.Len() == 0 {
		t.Fatal("outbox empty while server is down")
	}

	rs.start()
	if err := o.Flush(testCtx(t)); err != nil {
		t.Fatalf("flush after restart: %v (queued %d)", err, o.Len())
	}

	got := streamNotices(t, b)
	if len(got) != before+during {
		t.Fatalf("stream holds %d notices, want %d", len(got), before+during)
	}
	for i, n := range got {
		if n != notice(i) {
			t.Fatalf("notice %d = %+v, want %+v", i, n, notice(i))
		}
	}
	if o.Dropped() != 0 || o.Failed() != 0 {
		t.Fatalf("dropped %d failed %d, want 0 0", o.Dropped(), o.Failed())
	}
	st, ok, err := b.GetStatus(testCtx(t), "9")
	if err != nil || !ok || st.Code != status.Offline || st.Text != "OFFLINE" {
		t.Fatalf("status after flush = %+v ok=%v err=%v", st, ok, err)
	}
}

func TestOutboxDropsOldest(t *testing.T) {
	rs := startRestartable(t)
	b := openTest(t, Options{URL: rs.url(), ReconnectWait: testOptions(t).ReconnectWait})
	const max, total = 3, 8
	o := NewOutbox(b, max, zaptest.NewLogger(t))
	t.Cleanup(o.Close)

	rs.stop()
	testenv.WaitForNil(t, testWait, "disconnect noticed", func() error {
		if b.Conn().IsConnected() {
			return errors.New("still connected")
		}
		return nil
	})
	for i := range total {
		if err := o.EnqueueSegment(notice(i)); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	// One message may be in flight besides the max queued ones.
	if n := o.Len(); n > max+1 {
		t.Fatalf("Len = %d, want at most %d", n, max+1)
	}

	rs.start()
	if err := o.Flush(testCtx(t)); err != nil {
		t.Fatalf("flush: %v", err)
	}
	got := streamNotices(t, b)
	if uint64(len(got))+o.Dropped() != total {
		t.Fatalf("stored %d + dropped %d, want %d", len(got), o.Dropped(), total)
	}
	if len(got) < max || len(got) > max+1 {
		t.Fatalf("stored %d notices, want %d or %d", len(got), max, max+1)
	}
	// The newest max notices survive, in order.
	tail := got[len(got)-max:]
	for i, n := range tail {
		if want := notice(total - max + i); n != want {
			t.Fatalf("tail notice %d = %+v, want %+v", i, n, want)
		}
	}
}

func TestOutboxEnqueueInvalid(t *testing.T) {
	b := openTest(t, testOptions(t))
	o := NewOutbox(b, 0, zaptest.NewLogger(t))
	tests := []struct {
		name string
		fn   func() error
		want error
	}{
		{"core subject", func() error { return o.Enqueue("vigia.status.1", nil, "") }, ErrInvalidMessage},
		{"wildcard subject", func() error { return o.Enqueue("vigia.events.>", nil, "") }, ErrInvalidMessage},
		{"segment without key", func() error { return o.EnqueueSegment(SegmentNotice{Camera: "1"}) }, ErrInvalidMessage},
		{"status bad camera", func() error { return o.EnqueueStatus(status.Status{Camera: "a.b"}) }, ErrInvalidCamera},
		{"event ok", func() error { return o.Enqueue(EventSubject("1", 2), []byte(`{}`), "ev-1") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.fn(); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if err := o.Flush(testCtx(t)); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if o.Published() != 1 {
		t.Fatalf("published %d, want 1", o.Published())
	}
	o.Close()
	if err := o.Enqueue(SubjectJobsExport, nil, ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("enqueue after Close = %v, want ErrClosed", err)
	}
}
