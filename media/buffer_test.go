package media

import (
	"bytes"
	"errors"
	"testing"
)

func TestBufferClasses(t *testing.T) {
	for _, tc := range []struct{ n, size int }{
		{0, 2048}, {1, 2048}, {2048, 2048}, {2049, 4096}, {170_000, 256 << 10}, {8 << 20, 8 << 20},
	} {
		b := GetBuffer(tc.n)
		if len(b.B) != tc.size || cap(b.B) != tc.size {
			t.Errorf("GetBuffer(%d): %d bytes, want %d", tc.n, len(b.B), tc.size)
		}
		b.Put()
	}
	if b := GetBuffer(9 << 20); len(b.B) != 9<<20 {
		t.Errorf("past the largest class: %d bytes", len(b.B))
	}
}

// TestReleasePoisons: in tests a released unit's memory is overwritten, so
// that a consumer keeping a unit past its call reads garbage and fails.
func TestReleasePoisons(t *testing.T) {
	b := GetBuffer(100)
	copy(b.B, "frame")
	kept := b.B[:5]
	u := &Unit{NALUs: [][]byte{kept}, Buf: b}
	u.Release()
	if u.NALUs != nil || u.Buf != nil {
		t.Error("released unit still points at its memory")
	}
	if !bytes.Equal(kept, bytes.Repeat([]byte{PoisonByte}, 5)) {
		t.Errorf("released memory reads %q", kept)
	}
	u.Release() // twice is harmless
	(&Unit{}).Release()
}

func TestStoredNALUs(t *testing.T) {
	data := []byte{0, 0, 0, 2, 0x67, 0x42, 0, 0, 0, 3, 0x65, 1, 2}
	file := bytes.NewReader(append([]byte("xxxx"), data...))
	nalus, err := Stored{File: file, Off: 4, Size: len(data)}.NALUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(nalus) != 2 || !bytes.Equal(nalus[0], []byte{0x67, 0x42}) || !bytes.Equal(nalus[1], []byte{0x65, 1, 2}) {
		t.Errorf("read %x", nalus)
	}
	for name, s := range map[string]Stored{
		"length past the end": {File: bytes.NewReader([]byte{0, 0, 0, 9, 1}), Size: 5},
		"zero length":         {File: bytes.NewReader([]byte{0, 0, 0, 0}), Size: 4},
		"cut length":          {File: bytes.NewReader([]byte{0, 0, 1}), Size: 3},
	} {
		if _, err := s.NALUs(); !errors.Is(err, ErrStoredCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := (Stored{}).NALUs(); err == nil {
		t.Error("unstored unit read")
	}
}

// TestClone: a clone survives the release of the unit it came from.
func TestClone(t *testing.T) {
	b := GetBuffer(16)
	copy(b.B, "abcdefgh")
	u := &Unit{Key: true, NALUs: [][]byte{b.B[0:3], b.B[3:8]}, Buf: b}
	c := u.Clone()
	u.Release()
	if c.Buf != nil || !c.Key || len(c.NALUs) != 2 || string(c.NALUs[0]) != "abc" || string(c.NALUs[1]) != "defgh" {
		t.Fatalf("clone %+v", c)
	}
	a := (&Unit{Payload: []byte{1, 2}}).Clone()
	if len(a.Payload) != 2 || a.NALUs != nil {
		t.Fatalf("audio clone %+v", a)
	}
}
