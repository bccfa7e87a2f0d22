package bus

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestOpenEmbedded(t *testing.T) {
	b := openTest(t, testOptions(t))

	if !strings.HasPrefix(b.ClientURL(), "nats://127.0.0.1:") || strings.HasSuffix(b.ClientURL(), ":4222") {
		t.Fatalf("ClientURL = %q, want a random 127.0.0.1 port", b.ClientURL())
	}
	if d := b.Describe(); !strings.HasPrefix(d, "embedded nats 2.") || !strings.Contains(d, b.ClientURL()) || !strings.Contains(d, "jetstream: ") {
		t.Fatalf("Describe = %q", d)
	}
	if err := b.Ping(testCtx(t)); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if b.Conn() == nil || b.JetStream() == nil {
		t.Fatal("nil Conn or JetStream")
	}
	if kv := b.KV("nope"); kv != nil {
		t.Fatalf("KV(nope) = %v, want nil", kv)
	}
}

func TestTopology(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	for i := range 2 {
		if err := b.EnsureTopology(ctx); err != nil {
			t.Fatalf("EnsureTopology again (%d): %v", i+1, err)
		}
	}

	buckets := []struct {
		name    string
		history int64
		ttl     time.Duration
	}{
		{BucketCameras, CamerasHistory, 0},
		{BucketCameraStatus, 1, 0},
		{BucketNodes, 1, NodeTTL},
		{BucketAssign, 1, 0},
		{BucketSegmentEnds, 1, SegmentEndsTTL},
	}
	for _, tt := range buckets {
		t.Run("bucket "+tt.name, func(t *testing.T) {
			kv := b.KV(tt.name)
			if kv == nil {
				t.Fatal("KV returned nil")
			}
			st, err := kv.Status(ctx)
			if err != nil {
				t.Fatalf("status: %v", err)
			}
			if st.History() != tt.history || st.TTL() != tt.ttl {
				t.Fatalf("history %d ttl %s, want %d %s", st.History(), st.TTL(), tt.history, tt.ttl)
			}
		})
	}

	streams := []struct {
		name      string
		subject   string
		retention jetstream.RetentionPolicy
		maxAge    time.Duration
	}{
		{StreamEvents, SubjectEventsAll, jetstream.LimitsPolicy, EventsMaxAge},
		{StreamSegments, SubjectSegmentsAll, jetstream.LimitsPolicy, SegmentsMaxAge},
		{StreamGaps, SubjectGapsAll, jetstream.LimitsPolicy, GapsMaxAge},
		{StreamJobs, SubjectJobsExport, jetstream.WorkQueuePolicy, 0},
	}
	for _, tt := range streams {
		t.Run("stream "+tt.name, func(t *testing.T) {
			s, err := b.JetStream().Stream(ctx, tt.name)
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			cfg := s.CachedInfo().Config
			if len(cfg.Subjects) != 1 || cfg.Subjects[0] != tt.subject {
				t.Fatalf("subjects %v, want [%s]", cfg.Subjects, tt.subject)
			}
			if cfg.Retention != tt.retention || cfg.Storage != jetstream.FileStorage {
				t.Fatalf("retention %v storage %v", cfg.Retention, cfg.Storage)
			}
			if cfg.MaxAge != tt.maxAge || cfg.Duplicates != DuplicateWindow {
				t.Fatalf("max age %s duplicates %s", cfg.MaxAge, cfg.Duplicates)
			}
		})
	}
}

func TestExternalSeesSameBuckets(t *testing.T) {
	b1 := openTest(t, testOptions(t))
	b2 := openTest(t, Options{URL: b1.ClientURL(), Name: "second"})

	if b2.Describe() != b1.ClientURL() {
		t.Fatalf("external Describe = %q, want %q", b2.Describe(), b1.ClientURL())
	}
	ctx := testCtx(t)
	for _, name := range []string{BucketCameras, BucketCameraStatus, BucketNodes, BucketAssign} {
		if _, err := b1.KV(name).Put(ctx, "k", []byte(name)); err != nil {
			t.Fatalf("put %s: %v", name, err)
		}
		e, err := b2.KV(name).Get(ctx, "k")
		if err != nil {
			t.Fatalf("get %s through second bus: %v", name, err)
		}
		if string(e.Value()) != name {
			t.Fatalf("get %s = %q", name, e.Value())
		}
	}
}

func TestEmbeddedToken(t *testing.T) {
	const token = "s3cret-token"
	core, logs := observer.New(zap.DebugLevel)
	opts := testOptions(t)
	opts.Token = token
	b, err := Open(testCtx(t), opts, zap.New(core))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(b.Close)

	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"right token", token, true},
		{"no token", "", false},
		{"wrong token", "nope", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(testCtx(t), Options{URL: b.ClientURL(), Token: tt.token}, zap.New(core))
			if tt.ok {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				c.Close()
				return
			}
			if !errors.Is(err, ErrConnect) {
				t.Fatalf("open = %v, want ErrConnect", err)
			}
		})
	}

	for _, s := range []string{b.ClientURL(), b.Describe(), err2str(b.Ping(testCtx(t)))} {
		if strings.Contains(s, token) {
			t.Fatalf("token in %q", s)
		}
	}
	for _, e := range logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			line += " " + k + "=" + anyString(v)
		}
		if strings.Contains(line, token) {
			t.Fatalf("token logged: %s", line)
		}
	}
}

func TestOpenUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name string
		url  string
	}{
		{"closed port", "nats://" + addr},
		{"credentials in url", "nats://user:hunter2@" + addr},
		{"list of closed ports", "nats://" + addr + ",nats://" + addr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			b, err := Open(ctx, Options{URL: tt.url}, zap.NewNop())
			if err == nil {
				b.Close()
				t.Fatal("open succeeded")
			}
			if !errors.Is(err, ErrConnect) {
				t.Fatalf("err = %v, want ErrConnect", err)
			}
			if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("err = %q: want the address and no password", err)
			}
		})
	}
}

func TestOpenCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Open(ctx, Options{URL: "nats://127.0.0.1:1"}, zap.NewNop())
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
}

func TestClosedBus(t *testing.T) {
	b := openTest(t, testOptions(t))
	b.Close()
	b.Close() // second Close is a no-op

	ctx := testCtx(t)
	if err := b.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close = %v, want ErrClosed", err)
	}
	if err := b.PutSegmentEnd(ctx, "1", SegmentEnd{EndMs: 1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutSegmentEnd after Close = %v, want ErrClosed", err)
	}
	if err := b.EnsureTopology(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("EnsureTopology after Close = %v, want ErrClosed", err)
	}
}

// err2str returns err's text or "".
func err2str(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// anyString formats a logged field value.
func anyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if e, ok := v.(error); ok {
		return e.Error()
	}
	return ""
}
