//go:build !cgo

package decoder

import (
	"image"

	"github.com/vigia/vigia/media"
)

// ReleaseMemory does nothing without cgo: there are no C allocations.
func ReleaseMemory() bool { return false }

// Available reports whether this build can decode video: false without cgo.
func Available() bool { return false }

// Decoder is a placeholder in builds without cgo; New never returns one.
type Decoder struct{}

// New returns ErrUnavailable: this build has no libavcodec.
func New(codec media.Codec, opts Options) (*Decoder, error) { return nil, ErrUnavailable }

// Codec returns "".
func (d *Decoder) Codec() media.Codec { return "" }

// Decode returns ErrUnavailable.
func (d *Decoder) Decode(nalus [][]byte) (bool, error) { return false, ErrUnavailable }

// DecodeStill returns ErrUnavailable.
func (d *Decoder) DecodeStill(nalus [][]byte) (bool, error) { return false, ErrUnavailable }

// Reset does nothing.
func (d *Decoder) Reset() {}

// Size returns zero.
func (d *Decoder) Size() (width, height int) { return 0, 0 }

// YCbCr returns ErrUnavailable.
func (d *Decoder) YCbCr(width int) (*image.YCbCr, error) { return nil, ErrUnavailable }

// Gray returns ErrUnavailable.
func (d *Decoder) Gray(width int, dst *image.Gray) (*image.Gray, error) {
	return nil, ErrUnavailable
}

// Close does nothing.
func (d *Decoder) Close() {}
