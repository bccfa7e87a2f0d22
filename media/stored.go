package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrStoredCorrupt is returned when stored bytes are not AVCC NAL units.
var ErrStoredCorrupt = errors.New("stored frame is not a sequence of length-prefixed nal units")

// Stored is where the segmenter wrote a video unit: Size bytes at Off in
// File, each NAL unit after its 4-byte big-endian length (AVCC). File is
// the open segment's spool file: reads fail once that segment has ended
// and its file is closed, so a reader falls back to a newer unit.
type Stored struct {
	File io.ReaderAt
	Off  int64
	Size int
}

// Valid reports whether the unit was stored.
func (s Stored) Valid() bool { return s.File != nil && s.Size > 0 }

// NALUs reads the unit back: its NAL units, in memory of their own.
func (s Stored) NALUs() ([][]byte, error) {
	if !s.Valid() {
		return nil, errors.New("unit was not stored")
	}
	b := make([]byte, s.Size)
	if _, err := s.File.ReadAt(b, s.Off); err != nil {
		return nil, fmt.Errorf("read stored frame: %w", err)
	}
	var nalus [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, ErrStoredCorrupt
		}
		n := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n == 0 || n > len(b) {
			return nil, ErrStoredCorrupt
		}
		nalus = append(nalus, b[:n:n])
		b = b[n:]
	}
	return nalus, nil
}
