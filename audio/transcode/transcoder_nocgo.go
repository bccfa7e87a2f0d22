//go:build !cgo

package transcode

import (
	"time"

	"github.com/vigia/vigia/media"
)

// Available reports whether this build can transcode: false without cgo.
func Available() bool { return false }

// Transcoder is a placeholder in builds without cgo; New never returns one.
type Transcoder struct{}

// New returns ErrUnavailable: this build has no libavcodec.
func New(t *media.Track) (*Transcoder, error) { return nil, ErrUnavailable }

// Track returns nil.
func (t *Transcoder) Track() *media.Track { return nil }

// Stats returns zero.
func (t *Transcoder) Stats() Stats { return Stats{} }

// Horizon returns false.
func (t *Transcoder) Horizon() (time.Duration, bool) { return 0, false }

// Unit returns ErrUnavailable.
func (t *Transcoder) Unit(u *media.Unit, emit func(*media.Unit)) error { return ErrUnavailable }

// Flush does nothing.
func (t *Transcoder) Flush(track int, emit func(*media.Unit)) error { return nil }

// Close does nothing.
func (t *Transcoder) Close() {}
