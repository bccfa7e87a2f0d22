package bus

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/vigia/vigia/status"
)

func TestStatus(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)

	sub, err := b.Conn().SubscribeSync(StatusSubject("42"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Conn().Flush(); err != nil {
		t.Fatal(err)
	}

	in := status.Status{
		Camera: "42", Code: status.Online, Width: 1280, Height: 720,
		Node: "node-a", Since: time.UnixMilli(1700000000000).UTC(),
	}
	if err := publish(t, b, func(o *Outbox) error { return o.EnqueueStatus(in) }); err != nil {
		t.Fatalf("publish: %v", err)
	}
	want := in
	want.Text = "ONLINE"

	msg, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		t.Fatalf("subject: %v", err)
	}
	var fromSubject status.Status
	if err := json.Unmarshal(msg.Data, &fromSubject); err != nil {
		t.Fatalf("decode subject: %v", err)
	}
	if !fromSubject.Since.Equal(want.Since) || fromSubject.Code != want.Code || fromSubject.Text != want.Text ||
		fromSubject.Width != want.Width || fromSubject.Node != want.Node {
		t.Fatalf("subject got %+v, want %+v", fromSubject, want)
	}

	got, ok, err := b.GetStatus(ctx, "42")
	if err != nil || !ok {
		t.Fatalf("get: ok=%v err=%v", ok, err)
	}
	if got.Camera != want.Camera || got.Text != want.Text || got.Height != want.Height || !got.Since.Equal(want.Since) {
		t.Fatalf("kv got %+v, want %+v", got, want)
	}

	if _, ok, err := b.GetStatus(ctx, "43"); ok || err != nil {
		t.Fatalf("unknown camera: ok=%v err=%v, want false nil", ok, err)
	}
}

func TestStatusInvalidCamera(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	tests := []struct {
		name   string
		camera string
	}{
		{"empty camera", ""},
		{"dotted camera", "a.b"},
		{"wildcard camera", "*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := publish(t, b, func(o *Outbox) error { return o.EnqueueStatus(status.Status{Camera: tt.camera, Code: status.Offline}) })
			if !errors.Is(err, ErrInvalidCamera) {
				t.Fatalf("publish = %v, want ErrInvalidCamera", err)
			}
			if _, _, err := b.GetStatus(ctx, tt.camera); !errors.Is(err, ErrInvalidCamera) {
				t.Fatalf("get = %v, want ErrInvalidCamera", err)
			}
		})
	}
}

func TestListStatus(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	if got, err := b.ListStatus(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty bucket: %v %v", got, err)
	}
	for _, id := range []string{"a", "b"} {
		s := status.Status{Camera: id, Code: status.Online, Recorded: &status.Completeness{Hour: 0.5, Day: 0.25}}
		if err := publish(t, b, func(o *Outbox) error { return o.EnqueueStatus(s) }); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.ListStatus(ctx)
	if err != nil || len(got) != 2 || got[0].Recorded == nil || got[0].Recorded.Hour != 0.5 || got[1].Recorded.Day != 0.25 {
		t.Fatalf("list %+v %v", got, err)
	}
}
