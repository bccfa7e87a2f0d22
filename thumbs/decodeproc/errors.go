package decodeproc

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with
// errors.Is. Errors the decoder reports in the child (a unit refused, no
// picture, a picture not scalable, an unsupported codec, decoding not
// built in) come back as the thumbs/decoder package's sentinels
// (decoder.ErrDecode, ErrNoPicture, ErrScale, ErrCodec, ErrUnavailable).
var (
	// ErrProcess means the decoder process failed during the request: it
	// crashed, was killed, missed the deadline or broke the protocol. It
	// was killed and is started again at the next request.
	ErrProcess = errors.New("decoder process failed")

	// ErrStart means no decoder process could be started (the command is
	// wrong, or the process did not say it was ready in time). Starts are
	// retried after a pause.
	ErrStart = errors.New("decoder process did not start")

	// ErrBadRequest means a request breaks the protocol's rules (unknown
	// codec, no units, sizes past the limits).
	ErrBadRequest = errors.New("bad decode request")

	// ErrTooLarge means a request or its result does not fit in one frame
	// (MaxPayload).
	ErrTooLarge = errors.New("too large for the decoder protocol")

	// ErrProtocol means a frame could not be read: wrong magic, version or
	// type, a size past the limits, or a payload that does not parse.
	ErrProtocol = errors.New("decoder protocol error")

	// ErrTestOps means a test operation was sent to a process started
	// without --test-ops.
	ErrTestOps = errors.New("test operations are disabled")

	// ErrClosed means the Pool was closed.
	ErrClosed = errors.New("decoder pool closed")
)
