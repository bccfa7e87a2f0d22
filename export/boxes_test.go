package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
)

// segmentInit returns the init part (ftyp+moov) of a recorded segment.
func segmentInit(t testing.TB) []byte {
	st := newFS(t)
	record(t, st, "7", "h264", true, 5*time.Second, recRun{t0, 6 * time.Second})
	segs, err := FindSegments(context.Background(), catalogue.New(catalogue.Config{Store: st}), "7", t0, t0.Add(time.Minute))
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments %v %v", segs, err)
	}
	buf, err := readSegment(context.Background(), st, segs[0], 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, off, err := splitInit(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:off]
}

func TestParseInit(t *testing.T) {
	init := segmentInit(t)
	moov, _, err := splitInit(init)
	if err != nil {
		t.Fatal(err)
	}
	tracks, err := parseMoov(moov)
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 2 {
		t.Fatalf("%d tracks", len(tracks))
	}
	v, a := tracks[0], tracks[1]
	if v.handler != "vide" || v.timescale != 90000 || v.entryType() != "avc1" || v.width != 640 || v.height != 360 {
		t.Errorf("video %+v", v)
	}
	if a.handler != "soun" || a.timescale != 16000 || a.entryType() != "mp4a" {
		t.Errorf("audio %+v", a)
	}
	for name, bad := range map[string][]byte{
		"empty":          nil,
		"box past end":   {0, 0, 0, 9, 'm', 'o', 'o', 'v'},
		"short large":    {0, 0, 0, 1, 'x', 'x', 'x', 'x'},
		"truncated init": init[:len(init)-3],
	} {
		if _, _, err := splitInit(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := parseMoov([]byte{0, 0, 0, 8, 't', 'r', 'a', 'k'}); err == nil {
		t.Error("empty trak accepted")
	}
}

// FuzzParseInit feeds arbitrary bytes to the init parser: it must not
// panic, and whatever it accepts has sample entries inside the input.
func FuzzParseInit(f *testing.F) {
	f.Add(segmentInit(f))
	f.Add([]byte{0, 0, 0, 8, 'm', 'o', 'o', 'v'})
	f.Add([]byte{0, 0, 0, 1, 'm', 'o', 'o', 'v', 0, 0, 0, 0, 0, 0, 0, 16})
	f.Fuzz(func(t *testing.T, b []byte) {
		moov, _, err := splitInit(b)
		if err != nil {
			return
		}
		tracks, err := parseMoov(moov)
		if err != nil {
			return
		}
		for _, tr := range tracks {
			if len(tr.entry) < 8 || !bytes.Contains(b, tr.entry) || tr.timescale == 0 {
				t.Fatalf("accepted track %+v", tr)
			}
		}
	})
}

// TestWriteFuzzSeed keeps the committed corpus in step with the recorder's
// output (run with VIGIA_UPDATE_CORPUS=1 to rewrite it).
func TestWriteFuzzSeed(t *testing.T) {
	if os.Getenv("VIGIA_UPDATE_CORPUS") == "" {
		if _, err := os.Stat(filepath.Join("testdata", "fuzz", "FuzzParseInit", "recorded_init")); err != nil {
			t.Fatalf("corpus missing: %v (run with VIGIA_UPDATE_CORPUS=1)", err)
		}
		return
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParseInit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	content := "go test fuzz v1\n[]byte(" + quote(segmentInit(t)) + ")\n"
	if err := os.WriteFile(filepath.Join(dir, "recorded_init"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func quote(b []byte) string {
	var s bytes.Buffer
	s.WriteByte('"')
	for _, c := range b {
		s.WriteString("\\x")
		s.WriteByte("0123456789abcdef"[c>>4])
		s.WriteByte("0123456789abcdef"[c&15])
	}
	s.WriteByte('"')
	return s.String()
}
