package segmenter

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// tinyStream is a stream of small synthetic units: every payload byte
// depends on the unit's index, so a sample read from the wrong place shows.
type tinyStream struct {
	tracks []*media.Track
	units  []*media.Unit
}

// newTinyStream makes frames video units frame apart (a keyframe every gop,
// one to three NAL units each, PTS ahead of DTS on every other frame) and,
// when audioStep > 0, AAC units audioStep apart up to the last video unit,
// interleaved by DTS. The parameter sets are the 360p H.264 fixture's.
func newTinyStream(t testing.TB, frames int, frame time.Duration, gop int, audioStep time.Duration) *tinyStream {
	t.Helper()
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	vt := clip.Track()
	st := &tinyStream{tracks: []*media.Track{&vt}}
	if audioStep > 0 {
		ac, err := synth.AudioFixture()
		if err != nil {
			t.Fatal(err)
		}
		at := ac.Track()
		st.tracks = append(st.tracks, &at)
	}
	base := time.UnixMilli(1_700_000_000_000)
	ai := 0
	for i := range frames {
		dts := time.Duration(i) * frame
		for audioStep > 0 && time.Duration(ai)*audioStep <= dts {
			ad := time.Duration(ai) * audioStep
			payload := make([]byte, 3+ai%17)
			for j := range payload {
				payload[j] = byte(ai*7 + j)
			}
			st.units = append(st.units, &media.Unit{Track: 1, PTS: ad, DTS: ad, Time: base.Add(ad), Payload: payload})
			ai++
		}
		key := i%gop == 0
		var nalus [][]byte
		for j := range 1 + i%3 {
			n := make([]byte, 5+(i*7+j*3)%40)
			for k := range n {
				n[k] = byte(i + j*31 + k)
			}
			n[0] = 0x41 // non-IDR slice
			if key {
				n[0] = 0x06 // SEI before the IDR slice
				if j == i%3 {
					n[0] = 0x65
				}
			}
			nalus = append(nalus, n)
		}
		pts := dts + time.Duration(i%2)*frame
		st.units = append(st.units, &media.Unit{Track: 0, PTS: pts, DTS: dts, Time: base.Add(dts), Key: key, NALUs: nalus})
	}
	return st
}

// avcc returns the bytes of a video unit as a sample holds them.
func avcc(u *media.Unit) []byte {
	var b []byte
	for _, n := range u.NALUs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
	}
	return b
}

// testBox is a top-level box of a file.
type testBox struct {
	typ        string
	start, end int
}

// topBoxes walks the top-level boxes of a whole file.
func topBoxes(t testing.TB, b []byte) []testBox {
	t.Helper()
	var out []testBox
	for off := 0; off < len(b); {
		if len(b)-off < 8 {
			t.Fatalf("%d stray bytes at the end", len(b)-off)
		}
		size := int(binary.BigEndian.Uint32(b[off:]))
		if size < 8 || size > len(b)-off {
			t.Fatalf("box %q at %d: size %d of %d left", b[off+4:off+8], off, size, len(b)-off)
		}
		out = append(out, testBox{string(b[off+4 : off+8]), off, off + size})
		off += size
	}
	return out
}

// fragLayout is one fragment of a file as written: the header region
// (moof, free, mdat header) from start to data, the media up to end.
type fragLayout struct {
	start, data, end int
	free             int // size of the free box, 0 without one
	truns            int // trun boxes in the moof
}

// layout checks that a segment file is ftyp, moov, then fragments of moof,
// an optional free box of at least 8 bytes, and mdat, and returns them.
func layout(t testing.TB, b []byte) (initEnd int, frags []fragLayout) {
	t.Helper()
	boxes := topBoxes(t, b)
	if len(boxes) < 2 || boxes[0].typ != "ftyp" || boxes[1].typ != "moov" {
		t.Fatalf("file starts with %+v", boxes[:min(2, len(boxes))])
	}
	initEnd = boxes[1].end
	for i := 2; i < len(boxes); {
		f := fragLayout{start: boxes[i].start}
		if boxes[i].typ != "moof" {
			t.Fatalf("box %d is %q, want moof", i, boxes[i].typ)
		}
		moof := b[boxes[i].start+8 : boxes[i].end]
		for off := 0; off < len(moof); {
			size := int(binary.BigEndian.Uint32(moof[off:]))
			if string(moof[off+4:off+8]) == "traf" {
				traf := moof[off+8 : off+size]
				for o := 0; o < len(traf); o += int(binary.BigEndian.Uint32(traf[o:])) {
					if string(traf[o+4:o+8]) == "trun" {
						f.truns++
					}
				}
			}
			off += size
		}
		i++
		if i < len(boxes) && boxes[i].typ == "free" {
			f.free = boxes[i].end - boxes[i].start
			if f.free < 8 {
				t.Fatalf("free box of %d bytes", f.free)
			}
			i++
		}
		if i >= len(boxes) || boxes[i].typ != "mdat" {
			t.Fatalf("fragment at %d has no mdat", f.start)
		}
		f.data, f.end = boxes[i].start+8, boxes[i].end
		frags = append(frags, f)
		i++
	}
	return initEnd, frags
}

// writeTiny writes the stream into one segment and returns the stored file.
func writeTiny(t testing.TB, st *tinyStream, fragDur time.Duration) []byte {
	t.Helper()
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Hour, FragmentDuration: fragDur, Spool: sp, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks(st.tracks); err != nil {
		t.Fatal(err)
	}
	for i, u := range st.units {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			// The spool counts what the open file holds once what waits in
			// its write buffer is written, no more, no less.
			if f := w.seg.file; f != nil {
				f.mu.Lock()
				err := f.wb.flush(f)
				f.mu.Unlock()
				if err != nil {
					t.Fatal(err)
				}
			}
			parts, _ := filepath.Glob(filepath.Join(sp.cfg.Dir, "cam1", "*.part"))
			if len(parts) != 1 {
				t.Fatalf("spool files %v", parts)
			}
			fi, err := os.Stat(parts[0])
			if err != nil {
				t.Fatal(err)
			}
			if sp.Bytes() != fi.Size() {
				t.Fatalf("after unit %d: spool counts %d bytes, the file holds %d", i, sp.Bytes(), fi.Size())
			}
		}
	}
	w.Close()
	drain(t, sp)
	if n := sp.Bytes(); n != 0 {
		t.Errorf("spool counts %d bytes once everything is uploaded", n)
	}
	segs := ds.stored()
	if len(segs) != 1 {
		t.Fatalf("%d segments stored, want 1", len(segs))
	}
	b, err := os.ReadFile(ds.path(segs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != segs[0].Size {
		t.Fatalf("file of %d bytes, metadata says %d", len(b), segs[0].Size)
	}
	return b
}

// checkSamples parses a segment with mediacommon and checks every sample
// against the stream: payload, duration, composition offset, sync flag,
// and base times that follow on from one fragment to the next.
func checkSamples(t *testing.T, st *tinyStream, b []byte, initEnd int) fmp4.Parts {
	t.Helper()
	var init fmp4.Init
	if err := init.Unmarshal(bytes.NewReader(b[:initEnd])); err != nil {
		t.Fatal(err)
	}
	var parts fmp4.Parts
	if err := parts.Unmarshal(b[initEnd:]); err != nil {
		t.Fatalf("fmp4.Parts.Unmarshal: %v", err)
	}
	type want struct {
		payload []byte
		dur     int64
		cto     int32
		sync    bool
	}
	var video, audio []want
	var vu, au []*media.Unit
	for _, u := range st.units {
		if u.Track == 0 {
			vu = append(vu, u)
		}
	}
	for _, u := range st.units {
		// Audio from the first keyframe's presentation on: what comes
		// before it belongs to no segment.
		if u.Track == 1 && u.DTS >= vu[0].PTS {
			au = append(au, u)
		}
	}
	var rate int64
	if len(st.tracks) > 1 {
		rate = int64(st.tracks[1].AAC.SampleRate)
	}
	for i, u := range vu {
		w := want{payload: avcc(u), cto: int32(toTicks(u.PTS-u.DTS, 90000)), sync: u.Key}
		if i+1 < len(vu) {
			w.dur = toTicks(vu[i+1].DTS, 90000) - toTicks(u.DTS, 90000)
		} else {
			w.dur = video[i-1].dur
		}
		video = append(video, w)
	}
	for i, u := range au {
		w := want{payload: u.Payload, sync: true}
		if i+1 < len(au) {
			w.dur = toTicks(au[i+1].DTS, rate) - toTicks(u.DTS, rate)
		} else {
			w.dur = audio[i-1].dur
		}
		audio = append(audio, w)
	}
	next := map[int]uint64{}
	if len(au) > 0 {
		next[2] = uint64(toTicks(au[0].DTS-vu[0].DTS, rate))
	}
	got := map[int]int{}
	for pi, p := range parts {
		for _, pt := range p.Tracks {
			if pt.BaseTime != next[pt.ID] {
				t.Fatalf("fragment %d track %d: base time %d, want %d", pi, pt.ID, pt.BaseTime, next[pt.ID])
			}
			ws := video
			if pt.ID == 2 {
				ws = audio
			}
			for _, s := range pt.Samples {
				i := got[pt.ID]
				if i >= len(ws) {
					t.Fatalf("track %d: more samples than the %d written", pt.ID, len(ws))
				}
				w := ws[i]
				if !bytes.Equal(s.Payload, w.payload) {
					t.Fatalf("fragment %d track %d sample %d: payload of %d bytes differs from the unit's %d", pi, pt.ID, i, len(s.Payload), len(w.payload))
				}
				if int64(s.Duration) != w.dur || s.PTSOffset != w.cto || s.IsNonSyncSample == w.sync {
					t.Fatalf("fragment %d track %d sample %d: duration %d cto %d non-sync %v, want %d %d %v", pi, pt.ID, i,
						s.Duration, s.PTSOffset, s.IsNonSyncSample, w.dur, w.cto, !w.sync)
				}
				next[pt.ID] += uint64(s.Duration)
				got[pt.ID]++
			}
		}
	}
	if got[1] != len(video) || got[2] != len(audio) {
		t.Fatalf("read %d video and %d audio samples, wrote %d and %d", got[1], got[2], len(video), len(audio))
	}
	return parts
}

func TestWriteThroughSegmentParses(t *testing.T) {
	cases := []struct {
		name      string
		audioStep time.Duration
	}{
		{"video", 0},
		{"video_aac", 64 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newTinyStream(t, 25*5, 40*time.Millisecond, 25, tc.audioStep)
			b := writeTiny(t, st, time.Second)
			initEnd, frags := layout(t, b)
			if len(frags) != 5 {
				t.Errorf("%d fragments for 5 s in fragments of 1 s", len(frags))
			}
			free := 0
			for i, f := range frags {
				wantTruns := 1
				if tc.audioStep > 0 {
					wantTruns = 2
				}
				if f.truns != wantTruns {
					t.Errorf("fragment %d: %d trun boxes, want one per track", i, f.truns)
				}
				if f.free > 0 {
					free++
				}
			}
			if free == 0 {
				t.Error("no fragment has a free box: the layout under test is not the reserved one")
			}
			parts := checkSamples(t, st, b, initEnd)
			if len(parts) != len(frags) {
				t.Errorf("mediacommon reads %d fragments, the file has %d", len(parts), len(frags))
			}
			// Recovery reads the same file whole, free boxes included.
			ie, fe, err := scanFragments(b)
			if err != nil || ie != int64(initEnd) || fe != int64(len(b)) {
				t.Fatalf("scanFragments = %d, %d, %v; want %d, %d", ie, fe, err, initEnd, len(b))
			}
			if _, _, frames, err := inspect(b, ie); err != nil || frames != 125 {
				t.Fatalf("inspect: %d frames, %v", frames, err)
			}
		})
	}
}

// crashImage is what a crash leaves of a file while fragment f is written:
// everything before it, its header region not written yet (zeros) and its
// media after that.
func crashImage(b []byte, f fragLayout) []byte {
	img := bytes.Clone(b[:f.end])
	clear(img[f.start:f.data])
	return img
}

func TestRecoverCutInsideFragment(t *testing.T) {
	st := newTinyStream(t, 10*3, 100*time.Millisecond, 10, 64*time.Millisecond)
	b := writeTiny(t, st, time.Second)
	initEnd, frags := layout(t, b)
	if len(frags) != 3 {
		t.Fatalf("%d fragments, want 3", len(frags))
	}
	framesBefore := 0
	for k, f := range frags {
		wantEnd := int64(f.start)
		if k == 0 {
			wantEnd = 0
		} else {
			// What recovery keeps of a crash in fragment k parses.
			_, _, frames, err := inspect(b[:f.start], int64(initEnd))
			if err != nil {
				t.Fatalf("fragments before %d: %v", k, err)
			}
			if frames <= framesBefore {
				t.Fatalf("fragments before %d hold %d frames, before %d held %d", k, frames, k-1, framesBefore)
			}
			framesBefore = frames
		}
		img := crashImage(b, f)
		cuts := 0
		for c := f.start; c <= f.end; c++ {
			// Header region not written yet: cut anywhere in the reserve, the
			// video or the audio, or nothing cut at all.
			ie, fe, err := scanFragments(img[:c])
			if err != nil || ie != int64(initEnd) || fe != wantEnd {
				t.Fatalf("fragment %d, unwritten header, cut at %d of %d..%d: scanFragments = %d, %d, %v; want %d, %d",
					k, c, f.start, f.end, ie, fe, err, initEnd, wantEnd)
			}
			// Header written, file cut short.
			if c < f.end {
				ie, fe, err = scanFragments(b[:c])
				if err != nil || ie != int64(initEnd) || fe != wantEnd {
					t.Fatalf("fragment %d, cut at %d of %d..%d: scanFragments = %d, %d, %v; want %d, %d",
						k, c, f.start, f.end, ie, fe, err, initEnd, wantEnd)
				}
			}
			cuts++
		}
		if cuts < f.end-f.start {
			t.Fatalf("fragment %d: %d cuts", k, cuts)
		}
	}

	// Whole recovery from disk of a crash in the last fragment: a cut in its
	// reserve, in its video and in its audio.
	last := frags[len(frags)-1]
	for _, c := range []int{last.start + 3, last.data + 10, last.end - 2} {
		dir := t.TempDir()
		cam := filepath.Join(dir, "cam1")
		if err := os.MkdirAll(cam, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cam, "1700000000000.part"), crashImage(b, last)[:c], 0o640); err != nil {
			t.Fatal(err)
		}
		ds := &dirStore{dir: t.TempDir()}
		sp := newTestSpool(t, dir, ds)
		drain(t, sp)
		segs := ds.stored()
		if len(segs) != 1 || !segs[0].Recovered || segs[0].Size != int64(last.start) || segs[0].Frames != framesBefore {
			t.Fatalf("cut at %d: stored %+v, want one recovered segment of %d bytes and %d frames", c, segs, last.start, framesBefore)
		}
		got, err := os.ReadFile(ds.path(segs[0]))
		if err != nil || !bytes.Equal(got, b[:last.start]) {
			t.Fatalf("cut at %d: recovered file differs from the complete fragments (%v)", c, err)
		}
	}
}

func TestFragmentEndsEarlyWhenReserveFull(t *testing.T) {
	t.Run("video", func(t *testing.T) {
		// 400 frames 1 ms apart: all of them within one fragment's duration.
		st := newTinyStream(t, 400, time.Millisecond, 100, 0)
		b := writeTiny(t, st, time.Second)
		initEnd, frags := layout(t, b)
		parts := checkSamples(t, st, b, initEnd)
		// The first fragment's reserve holds firstFragmentSamples samples;
		// the next one is sized for twice that and holds the rest.
		if len(parts) != 2 || len(parts[0].Tracks[0].Samples) != firstFragmentSamples || len(parts[1].Tracks[0].Samples) != 400-firstFragmentSamples {
			for i, p := range parts {
				t.Logf("fragment %d: %d samples", i, len(p.Tracks[0].Samples))
			}
			t.Fatalf("%d fragments, want 2 of %d and %d samples", len(parts), firstFragmentSamples, 400-firstFragmentSamples)
		}
		if frags[0].free != 0 {
			t.Errorf("full first fragment has a free box of %d bytes", frags[0].free)
		}
		c := 2*firstFragmentSamples + 2*firstFragmentSamples/4 + 8
		if want := (c - (400 - firstFragmentSamples)) * trunEntrySize; frags[1].free != want {
			t.Errorf("second fragment: free box of %d bytes, want %d", frags[1].free, want)
		}
	})
	t.Run("audio_waits", func(t *testing.T) {
		// Audio every millisecond, video every 20: the reserve fills between
		// two video frames, and the audio it has no room for goes into the
		// next fragment.
		st := newTinyStream(t, 100, 20*time.Millisecond, 50, time.Millisecond)
		b := writeTiny(t, st, time.Second)
		initEnd, frags := layout(t, b)
		if len(frags) < 3 {
			t.Errorf("%d fragments for 2 s of media: none ended early", len(frags))
		}
		for i, f := range frags {
			if f.truns != 2 {
				t.Errorf("fragment %d: %d trun boxes, want one per track", i, f.truns)
			}
		}
		checkSamples(t, st, b, initEnd)
	})
}
