package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
)

// storedFile is one stored segment of a camera: where it starts on the
// wall clock (the recorder's own account: Vigia's segment metadata, the
// file name of MediaMTX's), and its media duration and video frames,
// counted from the file, with the frame marks of the fleet's cameras
// (synth.FrameMark) it holds.
type storedFile struct {
	camera string
	start  time.Time
	dur    time.Duration
	frames int64

	// indexed is the frames whose index is known: from their mark, or,
	// for a frame without one (a recorder may rewrite a frame: MediaMTX
	// drops the mark of the first keyframe it records), from the marked
	// frame next to it in the file. markMin and markMax are the lowest and
	// highest index.
	indexed          int64
	markMin, markMax uint64
}

// readStoredFile counts the frames of a segment file and their indexes.
func readStoredFile(path, camera string, start time.Time) (storedFile, error) {
	f := storedFile{camera: camera, start: start}
	var last uint64
	marked, lead := false, int64(0) // lead: frames before the first mark
	note := func(idx uint64) {
		if f.indexed == 0 || idx < f.markMin {
			f.markMin = idx
		}
		if f.indexed == 0 || idx > f.markMax {
			f.markMax = idx
		}
		f.indexed++
	}
	info, err := segmenter.InspectFileSamples(path, func(avcc []byte) {
		idx, ok := synth.FrameMarkAVCC(avcc)
		switch {
		case ok && !marked:
			marked = true
			for i := lead; i > 0 && uint64(i) <= idx; i-- {
				note(idx - uint64(i))
			}
		case !ok && marked:
			idx = last + 1
		case !ok:
			lead++
			return
		}
		last = idx
		note(idx)
	})
	if err != nil {
		return storedFile{}, err
	}
	f.dur, f.frames = info.Duration, int64(info.Frames)
	return f, nil
}

// fileFrameStats counts frames from the stored files, the same way for
// every recorder. When the index of every frame a camera's files hold is
// known (readStoredFile), the indexes count exactly: the camera sent every
// frame from the lowest index stored to the highest, and those not stored
// were lost.
// Otherwise, by the recorder's timestamps: files in order of start, each
// holds round(duration × fps) frame times (a frame lost inside a file
// lengthens the sample before it), and the time between one file's end and
// the next one's start, rounded to frames, is lost too (a reconnection, a
// drop to the next keyframe). A camera with no file lost every frame of
// recordWindow. Frames before a connection's first keyframe, and after the
// last one stored, are in no file and not counted.
func fileFrameStats(cameras []string, files []storedFile, fps float64, recordWindow time.Duration) FrameStats {
	byCam := map[string][]storedFile{}
	for _, f := range files {
		byCam[f.camera] = append(byCam[f.camera], f)
	}
	var st FrameStats
	marks := 0
	for _, cam := range cameras {
		fs := byCam[cam]
		if len(fs) == 0 {
			exp := int64(math.Round(recordWindow.Seconds() * fps))
			st.Expected += exp
			st.Lost += exp
			continue
		}
		st.CamerasRecorded++
		exp, stored, ok := markedFrames(fs)
		if !ok {
			exp, stored = timedFrames(fs, fps)
		} else {
			marks++
		}
		st.Expected += exp
		st.Stored += stored
		if exp > stored {
			st.Lost += exp - stored
		}
	}
	if st.Expected > 0 {
		st.LostPercent = 100 * float64(st.Lost) / float64(st.Expected)
	}
	if marks > 0 && marks == st.CamerasRecorded {
		st.CountedFrom = "marks"
	}
	return st
}

// markedFrames counts a camera's frames by their indexes; ok is false when
// the index of some frame is not known.
func markedFrames(fs []storedFile) (expected, stored int64, ok bool) {
	var lo, hi uint64
	for i, f := range fs {
		if f.indexed != f.frames || f.indexed == 0 {
			return 0, 0, false
		}
		if i == 0 || f.markMin < lo {
			lo = f.markMin
		}
		if i == 0 || f.markMax > hi {
			hi = f.markMax
		}
		stored += f.indexed
	}
	if stored == 0 {
		return 0, 0, false
	}
	return int64(hi-lo) + 1, stored, true
}

// timedFrames counts a camera's frames by the recorder's timestamps.
func timedFrames(fs []storedFile, fps float64) (exp, stored int64) {
	slices.SortFunc(fs, func(a, b storedFile) int { return a.start.Compare(b.start) })
	for i, f := range fs {
		exp += int64(math.Round(f.dur.Seconds() * fps))
		stored += f.frames
		if i > 0 {
			prevEnd := fs[i-1].start.Add(fs[i-1].dur)
			if gap := f.start.Sub(prevEnd); gap > 0 {
				exp += int64(math.Round(gap.Seconds() * fps))
			}
		}
	}
	return exp, stored
}

// fileCounter keeps what the recorder stored when frames are counted from
// the files (Options.CountFiles): the segments, counted once the recorder
// has closed so that reading them costs the measured window nothing.
type fileCounter struct {
	root    string // fs storage root; "" for other backends (counted from metadata)
	discard bool   // delete each file once counted

	mu   sync.Mutex
	segs []segmenter.Segment
}

// stored is the hook of each stored segment.
func (c *fileCounter) stored(seg segmenter.Segment) {
	c.mu.Lock()
	c.segs = append(c.segs, seg)
	c.mu.Unlock()
}

// count reads every stored segment's file (fs) or, for other backends,
// takes the recorder's metadata, and returns the files and the number that
// could not be read.
func (c *fileCounter) count() ([]storedFile, int, error) {
	c.mu.Lock()
	segs := c.segs
	c.segs = nil
	c.mu.Unlock()
	files := make([]storedFile, 0, len(segs))
	bad := 0
	var firstErr error
	for _, seg := range segs {
		f := storedFile{camera: seg.Camera, start: seg.Start, dur: seg.Duration, frames: int64(seg.Frames)}
		if c.root != "" {
			path := filepath.Join(c.root, filepath.FromSlash(storage.SegmentKey(seg.Camera, seg.Start, seg.Duration, seg.InitSize)))
			var err error
			f, err = readStoredFile(path, seg.Camera, seg.Start)
			if c.discard {
				_ = os.Remove(path)
			}
			if err != nil {
				bad++
				if firstErr == nil {
					firstErr = fmt.Errorf("count frames of %s: %w", path, err)
				}
				continue
			}
		}
		files = append(files, f)
	}
	return files, bad, firstErr
}
