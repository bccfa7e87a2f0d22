package rtmp

import "errors"

// Errors of the RTMP sources and the push server.
var (
	// ErrPublisherGone is returned by a push source when its publisher
	// disconnected or unpublished.
	ErrPublisherGone = errors.New("rtmp publisher disconnected")

	// ErrReplaced ends a publisher's session when another publisher with
	// the camera's key took its place.
	ErrReplaced = errors.New("rtmp publisher replaced by a new one")

	// ErrStreamEnded is returned by the pull source when the server ends
	// the stream.
	ErrStreamEnded = errors.New("rtmp stream ended by the server")

	// ErrNotListening is returned by a push source whose server cannot
	// listen on rtmp.addr.
	ErrNotListening = errors.New("rtmp push server not listening")

	// ErrServerClosed is returned after Server.Close.
	ErrServerClosed = errors.New("rtmp server closed")

	// ErrBadKey refuses a publisher with a missing or wrong stream key.
	ErrBadKey = errors.New("rtmp stream key refused")
)
