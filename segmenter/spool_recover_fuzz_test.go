package segmenter

import (
	"encoding/binary"
	"testing"
)

// box returns an ISO BMFF box of typ with payload.
func box(typ string, payload []byte) []byte {
	b := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(b, uint32(8+len(payload)))
	copy(b[4:], typ)
	return append(b, payload...)
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// FuzzRecoverSpoolFile feeds arbitrary spool file contents (what a crash,
// a full disk or a corrupted disk can leave) to the recovery parsers: they
// never panic, and the offsets they return lie within the file.
func FuzzRecoverSpoolFile(f *testing.F) {
	ftyp := box("ftyp", []byte("iso5\x00\x00\x02\x00iso5iso6mp41"))
	moov := box("moov", box("mvhd", make([]byte, 100)))
	f.Add(concat(ftyp, moov, box("moof", make([]byte, 24)), box("mdat", []byte{1, 2, 3})))
	f.Add(concat(ftyp, moov, box("moof", nil), box("mdat", nil), box("moof", nil)))
	f.Add(concat(ftyp, moov, box("moof", make([]byte, 24)))[:40])
	f.Add(concat(ftyp, []byte{0, 0, 0, 1, 'm', 'o', 'o', 'v', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
	f.Add([]byte{})
	// free and skip boxes: between moof and mdat, around fragments; a crash
	// in the middle of a fragment written after a zeroed header region.
	free := box("free", make([]byte, 16))
	f.Add(concat(ftyp, moov, box("moof", make([]byte, 24)), free, box("mdat", []byte{1, 2, 3})))
	f.Add(concat(ftyp, moov, box("skip", nil), box("moof", nil), box("skip", nil), box("mdat", nil), box("free", nil)))
	f.Add(concat(ftyp, moov, box("moof", make([]byte, 24)), free, box("mdat", []byte{1, 2, 3}), make([]byte, 48), []byte{0, 0, 0, 5, 0x65, 1, 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		initEnd, fragEnd, err := scanFragments(b)
		if err != nil {
			return
		}
		if initEnd <= 0 || initEnd > int64(len(b)) || fragEnd < 0 || fragEnd > int64(len(b)) || (fragEnd != 0 && fragEnd < initEnd) {
			t.Fatalf("scanFragments(%d bytes) = %d, %d", len(b), initEnd, fragEnd)
		}
		if fragEnd == 0 {
			return
		}
		_, dur, frames, err := inspect(b[:fragEnd], initEnd)
		if err == nil && (dur <= 0 || frames <= 0) {
			t.Fatalf("inspect: duration %v, %d frames without an error", dur, frames)
		}
	})
}
