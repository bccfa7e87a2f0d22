//go:build !cgo

package transcode

import (
	"time"

	"github.com/vigia/vigia/media"
)

// Available reports whether this build can transcode: false without cgo.
func Available() bool { return false }

// Unit is one H.264 access unit out of a Transcoder.
type Unit struct {
	// NALUs are the unit's NAL units, without start codes.
	NALUs [][]byte
	// PTS is the input's presentation time of the picture.
	PTS time.Duration
	// Key is true for an IDR picture.
	Key bool
}

// Transcoder is a placeholder in builds without cgo; New never returns one.
type Transcoder struct{}

// New returns ErrUnavailable: this build has no libavcodec.
func New(codec media.Codec, opts Options) (*Transcoder, error) { return nil, ErrUnavailable }

// Push returns ErrUnavailable.
func (t *Transcoder) Push(nalus [][]byte, pts time.Duration, key bool, params [][]byte) ([]Unit, error) {
	return nil, ErrUnavailable
}

// Flush returns ErrUnavailable.
func (t *Transcoder) Flush() ([]Unit, error) { return nil, ErrUnavailable }

// Close does nothing.
func (t *Transcoder) Close() {}
