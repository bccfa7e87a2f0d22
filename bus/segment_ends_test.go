package bus

import (
	"errors"
	"testing"
)

func TestSegmentEnd(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	if _, ok, err := b.GetSegmentEnd(ctx, "7"); ok || err != nil {
		t.Fatalf("before any put: ok %v err %v, want none", ok, err)
	}
	for _, e := range []SegmentEnd{{EndMs: 1704164460000, Node: "a"}, {EndMs: 1704164470000, Node: "b"}} {
		if err := b.PutSegmentEnd(ctx, "7", e); err != nil {
			t.Fatal(err)
		}
		got, ok, err := b.GetSegmentEnd(ctx, "7")
		if !ok || err != nil || got != e {
			t.Fatalf("got %+v ok %v err %v, want %+v", got, ok, err, e)
		}
	}
	if _, ok, _ := b.GetSegmentEnd(ctx, "8"); ok {
		t.Fatal("another camera's end returned")
	}
	if err := b.PutSegmentEnd(ctx, "a.b", SegmentEnd{EndMs: 1}); !errors.Is(err, ErrInvalidCamera) {
		t.Fatalf("dotted camera: %v, want ErrInvalidCamera", err)
	}
	if _, err := b.KVCreate(ctx, BucketSegmentEnds, "9", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.GetSegmentEnd(ctx, "9"); !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("undecodable record: %v, want ErrInvalidMessage", err)
	}
}
