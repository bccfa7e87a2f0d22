package synth

import "errors"

// Sentinel errors returned by the package. They are wrapped with context;
// test them with errors.Is.
var (
	// ErrUnknownCodec is returned for a codec other than CodecH264 or CodecH265.
	ErrUnknownCodec = errors.New("synth: unknown codec")

	// ErrBadClip is returned when a fixture clip cannot be parsed.
	ErrBadClip = errors.New("synth: bad clip")

	// ErrNoCamera is returned by the camera methods for a path that is not served.
	ErrNoCamera = errors.New("synth: no such camera")

	// ErrCameraExists is returned by AddCamera for a path that is already served.
	ErrCameraExists = errors.New("synth: camera already exists")

	// ErrBadSpec is returned for an invalid CameraSpec or Config.
	ErrBadSpec = errors.New("synth: bad camera spec")

	// ErrNotStarted is returned when a method that needs a running server is
	// called before Start or after Close.
	ErrNotStarted = errors.New("synth: server not running")
)
