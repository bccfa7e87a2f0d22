//go:build !cgo

package transcode

import (
	"time"

	"github.com/vigia/vigia/media"
)

// OpusPacket is one Opus packet of 20 ms out of a ToOpus.
type OpusPacket struct {
	// PTS is the time, on the input's clock, of the packet's first
	// decoded sample.
	PTS time.Duration
	// Payload is the Opus packet.
	Payload []byte
}

// ToOpus is a placeholder in builds without cgo; NewToOpus never returns
// one.
type ToOpus struct{}

// NewToOpus returns ErrUnavailable: this build has no libavcodec.
func NewToOpus(t *media.Track) (*ToOpus, error) { return nil, ErrUnavailable }

// Stats returns zero.
func (o *ToOpus) Stats() Stats { return Stats{} }

// Unit returns ErrUnavailable.
func (o *ToOpus) Unit(u *media.Unit, emit func(OpusPacket)) error { return ErrUnavailable }

// Close does nothing.
func (o *ToOpus) Close() {}
