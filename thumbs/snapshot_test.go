//go:build cgo

package thumbs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image/jpeg"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decoder"
)

// newTestWriter returns a segmenter Writer for tracks on a spool in a
// temporary folder (segments of an hour: they end when the test says so).
func newTestWriter(t *testing.T, tracks []*media.Track) *segmenter.Writer {
	t.Helper()
	sp, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir:     t.TempDir(),
		Upload:  func(context.Context, segmenter.Segment, io.ReadSeeker) error { return nil },
		Workers: 1,
		Log:     zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.Close)
	w := segmenter.NewWriter(segmenter.WriterConfig{Camera: "cam", SegmentDuration: time.Hour, Spool: sp, Log: zap.NewNop()})
	if err := w.SetTracks(tracks); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// own returns a copy of u whose NAL units are in memory of their own, and
// a function that overwrites that memory with media.PoisonByte, as the
// pipeline's release does under test.
func own(u *media.Unit) (*media.Unit, func()) {
	c := *u
	b := make([]byte, 0, u.Size())
	c.NALUs = nil
	for _, n := range u.NALUs {
		b = append(b, n...)
		c.NALUs = append(c.NALUs, b[len(b)-len(n):len(b):len(b)])
	}
	return &c, func() {
		for i := range b {
			b[i] = media.PoisonByte
		}
	}
}

// camFeed feeds a clip's units to a consumer the way a pipeline does:
// through the segmenter first when w is set, and each unit's memory
// overwritten as soon as Unit returns.
type camFeed struct {
	clip *synth.Clip
	base time.Time
	w    *segmenter.Writer
	c    *Consumer
	next int
}

// unit returns the clip's unit i (looped) with its times.
func (f *camFeed) unit(i int) *media.Unit {
	u := f.clip.Units[i%len(f.clip.Units)]
	u.PTS = time.Duration(i) * time.Second / 15
	u.DTS = u.PTS
	u.Time = f.base.Add(u.PTS)
	return &u
}

// feed delivers the next n units.
func (f *camFeed) feed(t *testing.T, n int) {
	t.Helper()
	for range n {
		u, poison := own(f.unit(f.next))
		f.next++
		if f.w != nil {
			if err := f.w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
			if !u.Stored.Valid() {
				t.Fatalf("unit %d not stored by the segmenter", f.next-1)
			}
		}
		f.c.Unit(u)
		poison()
	}
}

// wantJPEG is the image the Service must make of keyframe u: decoded
// alone in this process from its intact NAL units, at width (0: full
// size), encoded at quality.
func wantJPEG(t *testing.T, u *media.Unit, codec media.Codec, width, quality int) []byte {
	t.Helper()
	d, err := decoder.New(codec, decoder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if ok, err := d.DecodeStill(u.NALUs); err != nil || !ok {
		t.Fatalf("decode: %v %v", ok, err)
	}
	img, err := d.YCbCr(width)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// waitStored polls until st holds key; it fails as soon as s counts an
// image it could not make.
func waitStored(t *testing.T, s *Service, st *memStore, key string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st.mu.Lock()
		img, ok := st.keys[key]
		st.mu.Unlock()
		if ok {
			return img
		}
		if stats := s.Stats(); stats.DecodeErrors+stats.Dropped+stats.StoreErrors > 0 || time.Now().After(deadline) {
			t.Fatalf("%s not stored: stats %+v", key, stats)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSnapshotAndThumbnailOfOverwrittenUnits: every unit's memory is
// overwritten as soon as the consumer's Unit returns; the snapshot (of the
// newest keyframe) and the minute thumbnail (of the first) are still the
// images of the intact keyframes, byte for byte. "recorded": units go
// through the segmenter first, the snapshot reads its keyframe back from
// the spool file; "not recorded": no segmenter, the keyframes are copied.
func TestSnapshotAndThumbnailOfOverwrittenUnits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recorded bool
	}{
		{"recorded", true},
		{"not_recorded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := synth.Fixture(synth.CodecH265, true)
			if err != nil {
				t.Fatal(err)
			}
			tr := clip.Track()
			st := &memStore{}
			s := New(Config{Store: st.store, Decoder: testDecoder(t)})
			defer s.Close()
			f := &camFeed{clip: clip, base: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), c: s.Consumer("cam")}
			defer f.c.Close()
			if tc.recorded {
				f.w = newTestWriter(t, []*media.Track{&tr})
			}
			f.c.Tracks([]*media.Track{&tr})
			f.feed(t, 45) // keyframes at 0 s and 2 s

			snap, err := s.Snapshot(context.Background(), "cam")
			if err != nil {
				t.Fatal(err)
			}
			newest := f.unit(30)
			if !snap.Time.Equal(newest.Time) {
				t.Fatalf("snapshot of %s, want the keyframe at %s", snap.Time, newest.Time)
			}
			if want := wantJPEG(t, newest, tr.Codec, 0, 90); !bytes.Equal(snap.JPEG, want) || !bytes.Equal(waitStored(t, s, st, snap.Key), want) {
				t.Fatal("snapshot is not the image of the intact keyframe")
			}
			minute := waitStored(t, s, st, "minute/cam/"+strconv.FormatInt(f.base.UnixMilli(), 10))
			if want := wantJPEG(t, f.unit(0), tr.Codec, 320, 75); !bytes.Equal(minute, want) {
				t.Fatal("minute thumbnail is not the image of the intact keyframe")
			}
			if stats := s.Stats(); stats.DecodeErrors != 0 || stats.Unreadable != 0 {
				t.Fatalf("stats %+v", stats)
			}
		})
	}
}

// TestSnapshotAfterSegmentEnded: once the segment of the newest keyframe
// has ended with no keyframe after it, a snapshot fails with
// ErrNoKeyframe (nothing stored) when no keyframe follows within
// KeyframeWait; the next keyframe makes snapshots work again, and the
// snapshot already stored of a keyframe is returned even after its
// segment ended.
func TestSnapshotAfterSegmentEnded(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	tr := clip.Track()
	st := &memStore{}
	s := New(Config{Store: st.store, Decoder: testDecoder(t), KeyframeWait: 100 * time.Millisecond})
	defer s.Close()
	ctx := context.Background()
	f := &camFeed{clip: clip, base: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), c: s.Consumer("cam"), w: newTestWriter(t, []*media.Track{&tr})}
	defer f.c.Close()
	f.c.Tracks([]*media.Track{&tr})
	f.feed(t, 30) // the first GOP

	f.w.Discontinuity() // the segment ends; no keyframe yet after it
	if snap, err := s.Snapshot(ctx, "cam"); !errors.Is(err, ErrNoKeyframe) {
		t.Fatalf("snapshot after the segment ended: %+v, %v; want ErrNoKeyframe", snap, err)
	}
	if n := s.Stats().Unreadable; n != 1 {
		t.Fatalf("%d unreadable keyframes counted, want 1", n)
	}

	f.feed(t, 5) // the keyframe at 2 s starts a segment
	snap, err := s.Snapshot(ctx, "cam")
	if err != nil {
		t.Fatal(err)
	}
	key := f.unit(30)
	if !snap.Time.Equal(key.Time) || !bytes.Equal(snap.JPEG, wantJPEG(t, key, tr.Codec, 0, 90)) {
		t.Fatalf("snapshot of %s, want the image of the keyframe at %s", snap.Time, key.Time)
	}
	f.w.Discontinuity()
	again, err := s.Snapshot(ctx, "cam")
	if err != nil || again.Key != snap.Key {
		t.Fatalf("snapshot of the same keyframe after its segment ended: %+v, %v; want %s", again, err, snap.Key)
	}
	st.mu.Lock()
	snaps := 0
	for k := range st.keys {
		if strings.HasPrefix(k, string(KindSnapshot)+"/") {
			snaps++
		}
	}
	st.mu.Unlock()
	if snaps != 1 {
		t.Fatalf("%d snapshots stored, want 1", snaps)
	}
}

// endedFile is the spool file of a segment that ends while a snapshot
// reads it: each read first lets onRead deliver a newer keyframe, then
// fails as a closed file does.
type endedFile struct {
	reads  int
	onRead func()
}

func (f *endedFile) ReadAt([]byte, int64) (int, error) {
	f.reads++
	if f.onRead != nil {
		f.onRead()
	}
	return 0, os.ErrClosed
}

// storedIn writes u's bytes as the segmenter does (AVCC) to a file in dir
// and returns where: the file stays open until the test ends.
func storedIn(t *testing.T, dir string, u *media.Unit) media.Stored {
	t.Helper()
	var b []byte
	for _, n := range u.NALUs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
	}
	f, err := os.CreateTemp(dir, "spool")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return media.Stored{File: f, Off: 0, Size: len(b)}
}

// TestSnapshotTakesNewerKeyframe: the newest keyframe's segment ends while
// the snapshot reads it, and a newer keyframe arrives: the snapshot is of
// the newer one. The newer keyframe may also be noted only after the read
// failed (the pipeline notes the keyframe that ends a segment once the
// segment's file is closed): the snapshot waits for it, instead of failing
// with ErrNoKeyframe (seen once in e2e.TestDecoderIsolation: "the segment
// of the newest keyframe has ended (read stored frame: file already
// closed)"). When every newer keyframe's segment ends as well, the
// snapshot gives up after snapshotTries reads with ErrNoKeyframe.
func TestSnapshotTakesNewerKeyframe(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	tr := clip.Track()
	f := &camFeed{clip: clip, base: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, tc := range []struct {
		name    string
		newerOK bool // the newer keyframe can be read
		after   bool // it is noted only once the read has failed
	}{
		{"newer_readable", true, false},
		{"newer_noted_after_the_read", true, true},
		{"every_segment_ends", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{}
			s := New(Config{Store: st.store, Decoder: testDecoder(t)})
			defer s.Close()
			c := s.Consumer("cam")
			defer c.Close()
			c.Tracks([]*media.Track{&tr})
			ended := &endedFile{}
			older, newer := f.unit(0), f.unit(30)
			next := func() *media.Unit {
				u := *newer
				u.Time = u.Time.Add(time.Duration(ended.reads) * time.Millisecond) // a new keyframe each time
				u.Stored = media.Stored{File: ended, Size: 100}
				if tc.newerOK && ended.reads == 1 {
					u.Stored = storedIn(t, t.TempDir(), newer)
				}
				return &u
			}
			if tc.after {
				ended.reads = 1 // the read's count, as onRead sees it
				u := next()
				ended.reads = 0
				go func() {
					for s.Stats().Unreadable == 0 {
						runtime.Gosched()
					}
					c.Unit(u)
				}()
			} else {
				ended.onRead = func() { c.Unit(next()) }
			}
			u := *older
			u.Stored = media.Stored{File: ended, Size: 100}
			c.Unit(&u)

			snap, err := s.Snapshot(context.Background(), "cam")
			if !tc.newerOK {
				if !errors.Is(err, ErrNoKeyframe) || ended.reads != snapshotTries || s.Stats().Unreadable != snapshotTries {
					t.Fatalf("snapshot %+v, %v after %d reads (%d counted); want ErrNoKeyframe after %d", snap, err, ended.reads, s.Stats().Unreadable, snapshotTries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !snap.Time.Equal(newer.Time.Add(time.Millisecond)) || !bytes.Equal(snap.JPEG, wantJPEG(t, newer, tr.Codec, 0, 90)) {
				t.Fatalf("snapshot of %s, want the image of the newer keyframe", snap.Time)
			}
			if ended.reads != 1 || s.Stats().Unreadable != 1 {
				t.Fatalf("%d reads of the ended segment, %d counted; want 1", ended.reads, s.Stats().Unreadable)
			}
		})
	}
}
