package segmenter

import "encoding/binary"

// payloadBuf holds the media of the fragment being built, one track's
// samples back to back as they go into mdat. Its memory comes from
// allocMem: outside the Go heap where the system allows, so the second or
// so of video every camera holds is not counted twice by the collector's
// heap goal, and the units it came from become garbage at once.
type payloadBuf struct {
	mem *region
	n   int
}

// region is memory from allocMem; freeMem releases it.
type region struct{ b []byte }

// minPayloadCap is the first allocation: about a second of a 2 Mbit/s
// camera.
const minPayloadCap = 256 << 10

func (p *payloadBuf) grow(add int) {
	need := p.n + add
	if p.mem != nil && need <= len(p.mem.b) {
		return
	}
	c := minPayloadCap
	if p.mem != nil {
		c = 2 * len(p.mem.b)
	}
	for c < need {
		c *= 2
	}
	r := &region{b: allocMem(c)}
	if p.mem != nil {
		copy(r.b, p.mem.b[:p.n])
		freeMem(p.mem)
	}
	p.mem = r
}

// appendAVCC appends a video sample: each NAL unit after its 4-byte length.
func (p *payloadBuf) appendAVCC(nalus [][]byte) {
	n := 0
	for _, nalu := range nalus {
		n += 4 + len(nalu)
	}
	p.grow(n)
	b := p.mem.b
	for _, nalu := range nalus {
		binary.BigEndian.PutUint32(b[p.n:], uint32(len(nalu)))
		p.n += 4
		p.n += copy(b[p.n:], nalu)
	}
}

// append appends an audio sample.
func (p *payloadBuf) append(data []byte) {
	p.grow(len(data))
	p.n += copy(p.mem.b[p.n:], data)
}

// bytes returns the samples appended since the last reset; valid until the
// next append, reset or release.
func (p *payloadBuf) bytes() []byte {
	if p.mem == nil {
		return nil
	}
	return p.mem.b[:p.n]
}

func (p *payloadBuf) reset() { p.n = 0 }

// release gives the memory back; the buffer can be used again.
func (p *payloadBuf) release() {
	if p.mem != nil {
		freeMem(p.mem)
		p.mem = nil
	}
	p.n = 0
}
