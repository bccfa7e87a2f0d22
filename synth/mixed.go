package synth

// CodecMixed, as the codec of a group of cameras, alternates the codecs:
// camera 1 H.265, camera 2 H.264, and so on (CameraCodec).
const CodecMixed = "mixed"

// CameraCodec returns the codec of camera i (from 1) of a group whose
// codec is codec: codec itself, or, for CodecMixed, CodecH265 for odd i and
// CodecH264 for even i.
func CameraCodec(codec string, i int) string {
	if codec != CodecMixed {
		return codec
	}
	if i%2 == 1 {
		return CodecH265
	}
	return CodecH264
}
