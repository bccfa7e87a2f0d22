package segmenter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"

	"github.com/vigia/vigia/media"
)

// maxSpoolFile bounds what recovery reads into memory.
const maxSpoolFile = 1 << 30

// scanFragments walks the top-level boxes of a spooled segment and returns
// the byte size of the init part and the end of the last complete
// moof+mdat pair (0 when there is none). free and skip boxes are passed
// over wherever they are after the ftyp: the writer puts one between a moof
// and its mdat. A fragment cut short by a crash ends the walk: its header
// region, written last, is still zeros (a box size of 0), or its mdat
// reaches past the end of the file.
func scanFragments(b []byte) (initEnd, fragEnd int64, err error) {
	var pos int64
	n := int64(len(b))
	state := 0 // 0 ftyp, 1 moov, 2 moof-or-end, 3 mdat
	for pos+8 <= n {
		size := int64(binary.BigEndian.Uint32(b[pos:]))
		typ := string(b[pos+4 : pos+8])
		hdr := int64(8)
		if size == 1 {
			if pos+16 > n {
				break
			}
			size = int64(binary.BigEndian.Uint64(b[pos+8:]))
			hdr = 16
		}
		if size < hdr || size > n-pos {
			break // truncated, unwritten or garbage: stop at the last good box
		}
		switch {
		case state == 0 && typ == "ftyp":
			state = 1
		case state > 0 && (typ == "free" || typ == "skip"):
		case state == 1 && typ == "moov":
			state = 2
			initEnd = pos + size
		case state == 2 && typ == "moof":
			state = 3
		case state == 3 && typ == "mdat":
			state = 2
			fragEnd = pos + size
		default:
			if initEnd == 0 {
				return 0, 0, fmt.Errorf("%w: unexpected box %q", ErrCorruptSpool, typ)
			}
			return initEnd, fragEnd, nil
		}
		pos += size
	}
	if initEnd == 0 {
		return 0, 0, fmt.Errorf("%w: no init part", ErrCorruptSpool)
	}
	return initEnd, fragEnd, nil
}

// inspect parses a complete segment file and returns its video codec, media
// duration and frame count.
func inspect(b []byte, initEnd int64) (codec media.Codec, dur time.Duration, frames int, err error) {
	return inspectParts(b[:initEnd], b[initEnd:], nil)
}

// inspectParts parses the init part and the fragments of a segment and
// returns its video codec, media duration and frame count; sample, when
// set, gets each video sample's data (AVCC) in order.
func inspectParts(initPart, fragments []byte, sample func(avcc []byte)) (codec media.Codec, dur time.Duration, frames int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorruptSpool, r)
		}
	}()
	var init fmp4.Init
	if err := init.Unmarshal(bytes.NewReader(initPart)); err != nil {
		return "", 0, 0, fmt.Errorf("%w: init: %v", ErrCorruptSpool, err)
	}
	var video *fmp4.InitTrack
	for _, t := range init.Tracks {
		switch t.Codec.(type) {
		case *codecs.H264:
			video, codec = t, media.H264
		case *codecs.H265:
			video, codec = t, media.H265
		}
		if video != nil {
			break
		}
	}
	if video == nil {
		return "", 0, 0, fmt.Errorf("%w: no video track", ErrCorruptSpool)
	}
	var parts fmp4.Parts
	if err := parts.Unmarshal(fragments); err != nil {
		return "", 0, 0, fmt.Errorf("%w: fragments: %v", ErrCorruptSpool, err)
	}
	var first, end uint64
	seen := false
	for _, p := range parts {
		for _, t := range p.Tracks {
			if t.ID != video.ID {
				continue
			}
			if !seen {
				first, seen = t.BaseTime, true
			}
			e := t.BaseTime
			for _, s := range t.Samples {
				e += uint64(s.Duration)
				frames++
				if sample != nil {
					sample(s.Payload)
				}
			}
			end = e
		}
	}
	if !seen || end <= first {
		return "", 0, 0, ErrCorruptSpool
	}
	return codec, fromTicks(int64(end-first), int64(video.TimeScale)), frames, nil
}

// recoverFile cuts a spool file back to its last complete fragment, records
// its real duration and queues it for upload.
func (s *Spool) recoverFile(path string, counted bool) error {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".part"), ".mp4")
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() > maxSpoolFile {
		return fmt.Errorf("%w: file of %d bytes", ErrCorruptSpool, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	initEnd, fragEnd, err := scanFragments(b)
	if err != nil {
		return err
	}
	if fragEnd == 0 {
		removeSegmentFiles(path)
		if counted {
			s.addBytes(-st.Size())
		}
		return ErrCorruptSpool
	}
	b = b[:fragEnd]
	codec, dur, frames, err := inspect(b, initEnd)
	if err != nil {
		return err
	}

	meta, err := readMeta(base + ".json")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrCorruptSpool) {
			return err
		}
		startMs, perr := strconv.ParseInt(filepath.Base(base), 10, 64)
		if perr != nil {
			return fmt.Errorf("%w: file name %q", ErrCorruptSpool, filepath.Base(base))
		}
		meta = Segment{Camera: filepath.Base(filepath.Dir(base)), Start: time.UnixMilli(startMs).UTC()}
	}
	meta.Codec = codec
	meta.InitSize = initEnd
	meta.Duration = dur
	meta.Frames = frames
	meta.Size = fragEnd
	meta.Recovered = true
	meta.Path = base + ".mp4"

	// A finished segment is already whole: it is left untouched, since the
	// storage may hold it by a hard link.
	if fragEnd < st.Size() {
		if err := os.Truncate(path, fragEnd); err != nil {
			return fmt.Errorf("truncate spool file: %w", err)
		}
	}
	if err := writeMeta(base+".json", meta); err != nil {
		_ = os.Remove(base + ".json.tmp")
		return s.noSpace(err)
	}
	if path != meta.Path {
		if err := os.Rename(path, meta.Path); err != nil {
			return fmt.Errorf("rename spool file: %w", err)
		}
	}
	s.mu.Lock()
	if counted {
		s.bytes += meta.Size - st.Size()
	} else {
		s.bytes += meta.Size
	}
	s.mu.Unlock()
	s.enqueue(meta)
	return nil
}
