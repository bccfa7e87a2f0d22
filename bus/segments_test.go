package bus

import (
	"errors"
	"testing"
)

func TestSegmentDedupe(t *testing.T) {
	b := openTest(t, testOptions(t))

	n := SegmentNotice{Camera: "7", Key: "rec/7/2024/01/02/03/1704164400000_60000.mp4", StartMs: 1704164400000, DurMs: 60000, Size: 123456}
	for i := range 2 {
		if err := publish(t, b, func(o *Outbox) error { return o.EnqueueSegment(n) }); err != nil {
			t.Fatalf("publish %d: %v", i+1, err)
		}
	}
	got := streamNotices(t, b)
	if len(got) != 1 || got[0] != n {
		t.Fatalf("stream holds %+v, want exactly %+v", got, n)
	}

	other := n
	other.Key, other.StartMs = "rec/7/2024/01/02/03/1704164460000_60000.mp4", 1704164460000
	if err := publish(t, b, func(o *Outbox) error { return o.EnqueueSegment(other) }); err != nil {
		t.Fatalf("publish other: %v", err)
	}
	if got := streamNotices(t, b); len(got) != 2 || got[1] != other {
		t.Fatalf("stream holds %+v, want 2 notices ending with %+v", got, other)
	}
}

func TestSegmentInvalid(t *testing.T) {
	b := openTest(t, testOptions(t))
	tests := []struct {
		name string
		n    SegmentNotice
		want error
	}{
		{"empty camera", SegmentNotice{Key: "k"}, ErrInvalidCamera},
		{"dotted camera", SegmentNotice{Camera: "a.b", Key: "k"}, ErrInvalidCamera},
		{"empty key", SegmentNotice{Camera: "1"}, ErrInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := publish(t, b, func(o *Outbox) error { return o.EnqueueSegment(tt.n) }); !errors.Is(err, tt.want) {
				t.Fatalf("publish = %v, want %v", err, tt.want)
			}
		})
	}
}
