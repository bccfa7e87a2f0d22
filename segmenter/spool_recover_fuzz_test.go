package segmenter

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	// The writer's layout: a free box between moof and mdat; skip boxes
	// where a free box may be; a crash in the middle of a fragment (header
	// region still zeros, then part of the media).
	free := box("free", make([]byte, 16))
	f.Add(concat(ftyp, moov, box("moof", make([]byte, 24)), free, box("mdat", []byte{1, 2, 3})))
	f.Add(concat(ftyp, moov, box("skip", nil), box("moof", nil), box("skip", nil), box("mdat", nil), box("free", nil)))
	f.Add(concat(ftyp, moov, box("moof", make([]byte, 24)), free, box("mdat", []byte{1, 2, 3}), make([]byte, 48), []byte{0, 0, 0, 5, 0x65, 1, 2}))
	st := newTinyStream(f, 12, 100*time.Millisecond, 10, 64*time.Millisecond)
	seg := writeTiny(f, st, 500*time.Millisecond)
	_, frags := layout(f, seg)
	f.Add(seg)
	f.Add(crashImage(seg, frags[len(frags)-1]))
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

// TestWriteRecoverFuzzSeeds keeps the committed corpus of
// FuzzRecoverSpoolFile in step with the writer's output: a whole segment
// and the same segment crashed in its last fragment (run with
// VIGIA_UPDATE_CORPUS=1 to rewrite them).
func TestWriteRecoverFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRecoverSpoolFile")
	names := []string{"recorded_segment", "recorded_crash"}
	if os.Getenv("VIGIA_UPDATE_CORPUS") == "" {
		for _, name := range names {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Fatalf("corpus missing: %v (run with VIGIA_UPDATE_CORPUS=1)", err)
			}
		}
		return
	}
	st := newTinyStream(t, 12, 100*time.Millisecond, 10, 64*time.Millisecond)
	seg := writeTiny(t, st, 500*time.Millisecond)
	_, frags := layout(t, seg)
	for i, b := range [][]byte{seg, crashImage(seg, frags[len(frags)-1])} {
		var q []byte
		for _, c := range b {
			q = append(q, '\\', 'x', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		content := "go test fuzz v1\n[]byte(\"" + string(q) + "\")\n"
		if err := os.WriteFile(filepath.Join(dir, names[i]), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
