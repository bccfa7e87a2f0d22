package ingest

import (
	"bytes"
	"testing"
)

// TestParamsApplyKeepsCopies: parameter sets remembered and put in units
// are copies, so reusing a unit's memory afterwards changes nothing.
func TestParamsApplyKeepsCopies(t *testing.T) {
	sps := []byte{0x67, 0x42, 0x00, 0x1f}
	pps := []byte{0x68, 0xce, 0x38, 0x80}
	idr := []byte{0x65, 0x88}
	mem := append(append(append([]byte(nil), sps...), pps...), idr...)
	au := [][]byte{mem[0:4], mem[4:8], mem[8:10]}

	var p H264Params
	out := p.Apply(au)
	for i := range mem {
		mem[i] = 0xEE // the unit's memory reused
	}
	if !bytes.Equal(p.SPS, sps) || !bytes.Equal(p.PPS, pps) {
		t.Fatalf("remembered %x %x", p.SPS, p.PPS)
	}
	if !bytes.Equal(out[0], sps) || !bytes.Equal(out[1], pps) {
		t.Fatalf("unit's parameter sets %x %x point into its memory", out[0], out[1])
	}

	// An IDR without parameter sets gets the remembered ones in front.
	out = p.Apply([][]byte{idr})
	if len(out) != 3 || !bytes.Equal(out[0], sps) || !bytes.Equal(out[1], pps) {
		t.Fatalf("unit %x", out)
	}

	// The same parameter sets again: no new copy.
	before := &p.SPS[0]
	p.Apply([][]byte{append([]byte(nil), sps...), append([]byte(nil), pps...), idr})
	if &p.SPS[0] != before {
		t.Error("unchanged SPS copied again")
	}

	var q H265Params
	vps := []byte{0x40, 0x01, 0x0c}
	hmem := append([]byte(nil), vps...)
	out = q.Apply([][]byte{hmem})
	hmem[0] = 0xEE
	if !bytes.Equal(q.VPS, vps) || !bytes.Equal(out[0], vps) {
		t.Fatalf("h265: remembered %x, unit %x", q.VPS, out[0])
	}
}
