//go:build cgo

package decoder

import (
	"testing"

	"github.com/vigia/vigia/media"
)

// FuzzDecode feeds arbitrary access units (as cameras may send) to both
// decoders: they must fail cleanly, never crash.
func FuzzDecode(f *testing.F) {
	f.Add(false, []byte{0x67, 0x4d, 0x00, 0x1f, 0x9a, 0x66, 0x02, 0x80, 0x2d, 0xd0, 0x80}, []byte{0x65, 0x88, 0x84, 0x00, 0x33})
	f.Add(true, []byte{0x40, 0x01, 0x0c, 0x01, 0xff, 0xff}, []byte{0x26, 0x01, 0xaf, 0x00})
	f.Add(false, []byte{}, []byte{0x41, 0x9a, 0x00})
	f.Fuzz(func(t *testing.T, h265 bool, a, b []byte) {
		codec := media.H264
		if h265 {
			codec = media.H265
		}
		d, err := New(codec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		_, _ = d.DecodeStill([][]byte{a, b})
		if ok, err := d.Decode([][]byte{b}); ok && err == nil {
			if _, err := d.Gray(64, nil); err != nil {
				t.Fatalf("picture decoded but not scalable: %v", err)
			}
		}
	})
}
