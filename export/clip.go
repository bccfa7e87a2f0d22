package export

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vigia/vigia/media"
)

// Gap is a span inside a clip without recordings.
type Gap struct {
	// From and To are wall-clock times.
	From, To time.Time
}

// Source is a segment a clip was made from.
type Source struct {
	// Key is the segment's object key.
	Key string
	// Size is its length in bytes.
	Size int64
	// SHA256 is the hash of the bytes read.
	SHA256 [32]byte
}

// Keyframe is the clip's first video frame, for a thumbnail.
type Keyframe struct {
	// Codec is media.H264 or media.H265.
	Codec media.Codec
	// VPS (H.265), SPS and PPS from the segment's sample description.
	VPS, SPS, PPS []byte
	// NALUs of the frame, without length prefixes.
	NALUs [][]byte
	// Width and Height of the picture.
	Width, Height int
}

// Clip is a finished export: a progressive MP4 file, ftyp and moov (held in
// memory) followed by the mdat (in a temporary file). Close removes the
// temporary file.
type Clip struct {
	// Start is the wall-clock time of the first frame (the keyframe at or
	// before the requested start); End the wall-clock end of the video.
	Start, End time.Time
	// Segments is the number of segments read.
	Segments int
	// Gaps are the spans without recordings inside the clip.
	Gaps []Gap
	// VideoFrames and AudioFrames count the samples.
	VideoFrames, AudioFrames int
	// Keyframe is the first video frame.
	Keyframe *Keyframe
	// Sources are the segments read, in order, with the SHA-256 of the
	// bytes read.
	Sources []Source
	// Transcoded counts the segments whose video was transcoded to H.264
	// (Options.H264) rather than copied.
	Transcoded int

	head  []byte
	body  *os.File
	bsize int64
}

// Duration returns the length of the clip's timeline (gaps included).
func (c *Clip) Duration() time.Duration { return c.End.Sub(c.Start) }

// Size returns the file size in bytes.
func (c *Clip) Size() int64 { return int64(len(c.head)) + c.bsize }

// ReadAt reads the file at off.
func (c *Clip) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(c.head)) {
		n = copy(p, c.head[off:])
		if n == len(p) {
			return n, nil
		}
		off += int64(n)
	}
	bo := off - int64(len(c.head))
	if bo >= c.bsize {
		return n, io.EOF
	}
	want := p[n:]
	if int64(len(want)) > c.bsize-bo {
		want = want[:c.bsize-bo]
	}
	m, err := c.body.ReadAt(want, bo)
	n += m
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// Reader returns a reader of the whole file that can seek (as S3 uploads
// need for retries).
func (c *Clip) Reader() io.ReadSeeker { return io.NewSectionReader(c, 0, c.Size()) }

// WriteTo writes the file to w.
func (c *Clip) WriteTo(w io.Writer) (int64, error) {
	n, err := io.Copy(w, io.NewSectionReader(c, 0, c.Size()))
	if err != nil {
		return n, fmt.Errorf("write clip: %w", err)
	}
	return n, nil
}

// Close removes the temporary file.
func (c *Clip) Close() error {
	if c.body == nil {
		return nil
	}
	name := c.body.Name()
	_ = c.body.Close()
	c.body = nil
	return os.Remove(name)
}
