package thumbs

import (
	"context"

	"github.com/vigia/vigia/thumbs/decodeproc"
)

// Decoder decodes access units outside the recorder process: a
// *decodeproc.Pool, whose decoder processes may crash on a malformed
// bitstream without harm to the recorder.
type Decoder interface {
	// Available reports whether it can decode (cgo, a decoder command).
	Available() bool
	// Decode runs one request.
	Decode(ctx context.Context, req *decodeproc.Request) (*decodeproc.Result, error)
}

var _ Decoder = (*decodeproc.Pool)(nil)
