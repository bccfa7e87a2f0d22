package synth

import (
	"encoding/binary"
	"testing"
)

func TestFrameMark(t *testing.T) {
	for _, codec := range []string{CodecH264, CodecH265} {
		for _, idx := range []uint64{0, 1, 127, 128, 1 << 40, maxMarkIndex} {
			nalu := appendMark(nil, codec, idx)
			for i := 0; i+2 < len(nalu); i++ {
				if nalu[i] == 0 && nalu[i+1] == 0 && nalu[i+2] <= 3 {
					t.Fatalf("%s mark of %d needs emulation prevention at %d", codec, idx, i)
				}
			}
			got, ok := FrameMark(nalu)
			if !ok || got != idx {
				t.Fatalf("%s: FrameMark(mark of %d) = %d, %v", codec, idx, got, ok)
			}
			avcc := binary.BigEndian.AppendUint32(nil, 3)
			avcc = append(avcc, 0x09, 0x10, 0x00) // an access unit delimiter first
			avcc = binary.BigEndian.AppendUint32(avcc, uint32(len(nalu)))
			avcc = append(avcc, nalu...)
			if got, ok := FrameMarkAVCC(avcc); !ok || got != idx {
				t.Fatalf("%s: FrameMarkAVCC = %d, %v", codec, got, ok)
			}
		}
	}
	mark := appendMark(nil, CodecH264, 5)
	other := append([]byte(nil), mark...)
	other[5] ^= 1 // another UUID
	short := mark[:len(mark)-4]
	clearBit := append([]byte(nil), mark...)
	clearBit[len(mark)-2] &^= 0x80
	for name, n := range map[string][]byte{"other uuid": other, "short": short, "index byte without its high bit": clearBit,
		"slice": {0x65, 0x88}, "empty": nil} {
		if _, ok := FrameMark(n); ok {
			t.Errorf("%s: taken for a mark", name)
		}
	}
	if _, ok := FrameMarkAVCC([]byte{0, 0, 1, 0, 6}); ok {
		t.Error("a NAL unit longer than the sample taken for a mark")
	}
}

// FuzzFrameMark: arbitrary sample data is read without a panic, and a
// mark read back is a mark written.
func FuzzFrameMark(f *testing.F) {
	f.Add(binary.BigEndian.AppendUint32(nil, uint32(len(appendMark(nil, CodecH265, 9)))), uint64(9))
	f.Add(append(binary.BigEndian.AppendUint32(nil, 29), appendMark(nil, CodecH264, 77)...), uint64(77))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint64(0))
	f.Fuzz(func(t *testing.T, sample []byte, idx uint64) {
		_, _ = FrameMarkAVCC(sample)
		for _, codec := range []string{CodecH264, CodecH265} {
			if got, ok := FrameMark(appendMark(nil, codec, idx)); !ok || got != idx&maxMarkIndex {
				t.Fatalf("%s: %d read back as %d, %v", codec, idx, got, ok)
			}
		}
	})
}
