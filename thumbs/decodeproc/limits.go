package decodeproc

// Bounds of the protocol. A frame or a field past them is refused before
// anything is allocated for it.
const (
	// MaxPayload bounds one frame's payload, either way: a request's access
	// units (a long GOP of a snapshot at a past time) or a result (a raw
	// full-resolution picture: 12 MB at 3840x2160).
	MaxPayload = 32 << 20

	// MaxUnits bounds the access units of one request (a GOP of 60 s at
	// 60 fps).
	MaxUnits = 4096

	// MaxNALUs bounds the NAL units of one access unit.
	MaxNALUs = 1024

	// MaxSide bounds the width and height of a picture asked for or
	// returned.
	MaxSide = 16384

	// maxMessage bounds the text of an error frame.
	maxMessage = 512

	// headerSize is the size of a frame header.
	headerSize = 12

	// readStep is how much of a large payload is allocated at a time, so
	// that a header announcing more than follows costs little.
	readStep = 1 << 20
)
