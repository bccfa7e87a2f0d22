package decoder

// inputPadding is AV_INPUT_BUFFER_PADDING_SIZE: libavcodec may read this
// many bytes past the end of an input buffer, which must be zero.
const inputPadding = 64

// appendAnnexB appends nalus to dst with a 4-byte start code before each,
// followed by inputPadding zero bytes (not counted in the returned length).
func appendAnnexB(dst []byte, nalus [][]byte) (buf []byte, n int) {
	dst = dst[:0]
	for _, nalu := range nalus {
		if len(nalu) == 0 {
			continue
		}
		dst = append(dst, 0, 0, 0, 1)
		dst = append(dst, nalu...)
	}
	n = len(dst)
	for i := 0; i < inputPadding; i++ {
		dst = append(dst, 0)
	}
	return dst, n
}
