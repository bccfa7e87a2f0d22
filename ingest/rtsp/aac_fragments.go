package rtsp

// aacFragments brings the AU-size of an AAC frame fragmented over several
// RTP packets (RFC 3640 3.2.3.1: "the AU-size indicates the size of the
// entire AU and not the size of the fragment", as GStreamer's payloader
// writes it) to the size of the fragment in the packet, which gortsplib's
// decoder expects (its own encoder writes that): without it, every
// fragmented frame of such a sender fails with "payload is too short".
// Fragments that already carry their own size are left as they are.
type aacFragments struct {
	inFrag bool // the last packet started or continued a fragmented frame
}

// normalize rewrites, in place, the AU-size of payload (an RFC 3640
// payload of a track with sizeLength and indexLength bits in its first
// AU-header) when the packet is a fragment of a frame.
func (f *aacFragments) normalize(payload []byte, marker bool, sizeLength, indexLength int) {
	frag := f.inFrag || !marker
	f.inFrag = !marker
	if !frag || len(payload) < 2 || sizeLength <= 0 || sizeLength > 16 {
		return
	}
	headersLen := int(payload[0])<<8 | int(payload[1])
	if headersLen != sizeLength+indexLength { // one AU-header: a fragment
		return
	}
	hdrBytes := (headersLen + 7) / 8
	if len(payload) < 2+hdrBytes {
		return
	}
	data := len(payload) - 2 - hdrBytes
	h := payload[2:]
	// The AU-size: the first sizeLength bits of the header.
	var size int
	for i := range sizeLength {
		size = size<<1 | int(h[i/8]>>(7-i%8)&1)
	}
	if size <= data {
		return
	}
	for i := range sizeLength {
		bit := byte(data>>(sizeLength-1-i)) & 1
		h[i/8] = h[i/8]&^(1<<(7-i%8)) | bit<<(7-i%8)
	}
}
