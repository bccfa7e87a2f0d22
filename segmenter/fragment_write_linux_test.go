//go:build linux

package segmenter

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// TestWriterWriteErrorSalvages fills the disk (the spool file's descriptor
// becomes /dev/full, where every write fails with ENOSPC) in the middle of
// a fragment or at its end: the write fails when the fragment's bytes go
// out (at its end at the latest), the segment is cut short, its complete
// fragments are stored as a recovered segment, the unit is counted as
// spool_write, and the spool's byte count comes back to zero.
func TestWriterWriteErrorSalvages(t *testing.T) {
	cases := []struct {
		name string
		at   time.Duration // DTS of the video unit whose write fails
	}{
		{"sample", 2500 * time.Millisecond},
		{"fragment_end", 3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newTinyStream(t, 25*4, 40*time.Millisecond, 25, 64*time.Millisecond)
			ds := &dirStore{dir: t.TempDir()}
			sp := newTestSpool(t, t.TempDir(), ds)
			var drops []string
			w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Hour, Spool: sp, Log: zaptest.NewLogger(t),
				OnDrop: func(reason string) { drops = append(drops, reason) }})
			if err := w.SetTracks(st.tracks); err != nil {
				t.Fatal(err)
			}
			i := 0
			for ; st.units[i].Track != 0 || st.units[i].DTS < tc.at; i++ {
				if err := w.WriteUnit(st.units[i]); err != nil {
					t.Fatal(err)
				}
			}
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer full.Close()
			if err := unix.Dup3(int(full.Fd()), w.seg.file.fd, 0); err != nil {
				t.Fatal(err)
			}
			// The unit's bytes may wait in the file's write buffer: the
			// write fails when they go out, at the fragment's end at the
			// latest.
			for ; i < len(st.units); i++ {
				if err = w.WriteUnit(st.units[i]); err != nil {
					break
				}
				if st.units[i].Track == 0 && st.units[i].DTS >= 3*time.Second {
					break
				}
			}
			if !errors.Is(err, syscall.ENOSPC) || len(drops) != 1 || drops[0] != "spool_write" || w.seg != nil {
				t.Fatalf("write on a full disk: %v, drops %v, segment open %v", err, drops, w.seg != nil)
			}
			w.Close()
			drain(t, sp)
			segs := ds.stored()
			if len(segs) != 1 || !segs[0].Recovered || segs[0].Frames != 50 || segs[0].Duration != 2*time.Second {
				t.Fatalf("stored %+v, want one recovered segment of the two complete fragments (50 frames, 2 s)", segs)
			}
			b, err := os.ReadFile(ds.path(segs[0]))
			if err != nil {
				t.Fatal(err)
			}
			if _, frags := layout(t, b); len(frags) != 2 {
				t.Errorf("recovered segment has %d fragments, want 2", len(frags))
			}
			if n := sp.Bytes(); n != 0 {
				t.Errorf("spool counts %d bytes once everything is uploaded", n)
			}
			if left, _ := filepath.Glob(filepath.Join(sp.cfg.Dir, "cam1", "*")); len(left) != 0 {
				t.Errorf("files left in the spool: %v", left)
			}
		})
	}
}
