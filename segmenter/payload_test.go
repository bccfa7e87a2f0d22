package segmenter

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestPayloadBufGrowsAndKeepsBytes(t *testing.T) {
	var p payloadBuf
	defer p.release()
	var want []byte
	nalu := bytes.Repeat([]byte{0x65, 1, 2, 3}, 1000)
	// Well past the first allocation, so the buffer grows several times.
	for i := 0; len(want) < 5*minPayloadCap; i++ {
		p.appendAVCC([][]byte{nalu[:i%len(nalu)+1], {0x06, byte(i)}})
		want = binary.BigEndian.AppendUint32(want, uint32(i%len(nalu)+1))
		want = append(want, nalu[:i%len(nalu)+1]...)
		want = binary.BigEndian.AppendUint32(want, 2)
		want = append(want, 0x06, byte(i))
		p.append([]byte{0xAA})
		want = append(want, 0xAA)
	}
	if !bytes.Equal(p.bytes(), want) {
		t.Fatalf("buffer holds %d bytes, not the %d appended", len(p.bytes()), len(want))
	}
	p.reset()
	if len(p.bytes()) != 0 {
		t.Fatalf("after reset: %d bytes", len(p.bytes()))
	}
	p.append([]byte("x"))
	p.release()
	if p.bytes() != nil {
		t.Fatal("released buffer still has bytes")
	}
	p.append([]byte("again")) // usable after release
	if string(p.bytes()) != "again" {
		t.Fatalf("after release and append: %q", p.bytes())
	}
}
