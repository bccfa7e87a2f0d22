package segmenter

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/vigia/vigia/media"
)

// FileInfo is what a fragmented-MP4 segment file holds, up to its last
// complete fragment.
type FileInfo struct {
	// Codec is the video codec.
	Codec media.Codec

	// Duration is the video track's media duration: from the first
	// sample's decode time to the end of the last sample.
	Duration time.Duration

	// Frames is the number of video samples.
	Frames int

	// Size is the bytes up to the end of the last complete fragment.
	Size int64
}

// InspectFileSamples reads a fragmented-MP4 segment file (ftyp, moov, then
// moof and mdat pairs: what the spool writes, and what other recorders that
// write fMP4 segments write) and returns its video codec, media duration
// and frame count, by the same parsing that spool recovery uses. A
// fragment cut short at the end of the file is left out. When sample is
// not nil, it is handed each video sample's data (length-prefixed NAL
// units), in order; the data is valid during the call only.
func InspectFileSamples(path string, sample func(avcc []byte)) (FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	if st.Size() > maxSpoolFile {
		return FileInfo{}, fmt.Errorf("%w: file of %d bytes", ErrCorruptSpool, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return FileInfo{}, err
	}
	initEnd, fragEnd, err := scanFragments(b)
	if err != nil {
		return FileInfo{}, err
	}
	if fragEnd == 0 {
		return FileInfo{}, fmt.Errorf("%w: no complete fragment", ErrCorruptSpool)
	}
	codec, dur, frames, err := inspectParts(withoutUserData(b[:initEnd]), b[initEnd:fragEnd], sample)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Codec: codec, Duration: dur, Frames: frames, Size: fragEnd}, nil
}

// withoutUserData returns an init part (ftyp, moov) without the user data
// boxes of its moov: other recorders keep their own boxes there (MediaMTX
// an mtxi box), which the fMP4 reader refuses as unknown. An init part
// without such a box is returned as it is.
func withoutUserData(initPart []byte) []byte {
	var out []byte
	for off := 0; off+8 <= len(initPart); {
		size := int(binary.BigEndian.Uint32(initPart[off:]))
		if size < 8 || off+size > len(initPart) {
			return initPart
		}
		if string(initPart[off+4:off+8]) == "moov" {
			moov := initPart[off : off+size]
			kept := append([]byte(nil), moov[:8]...)
			found := false
			for c := 8; c+8 <= len(moov); {
				cs := int(binary.BigEndian.Uint32(moov[c:]))
				if cs < 8 || c+cs > len(moov) {
					return initPart
				}
				if string(moov[c+4:c+8]) == "udta" {
					found = true
				} else {
					kept = append(kept, moov[c:c+cs]...)
				}
				c += cs
			}
			if !found {
				return initPart
			}
			binary.BigEndian.PutUint32(kept, uint32(len(kept)))
			out = append(append(append(out, initPart[:off]...), kept...), initPart[off+size:]...)
			return out
		}
		off += size
	}
	return initPart
}
