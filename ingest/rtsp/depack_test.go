package rtsp

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// collected is what a depacketizer emitted and reported.
type collected struct {
	units [][][]byte
	ts    []uint32
	errs  []error
}

func (c *collected) emit(nalus [][]byte, ts uint32, _ *media.Buffer) {
	c.units = append(c.units, nalus)
	c.ts = append(c.ts, ts)
}
func (c *collected) fail(err error) { c.errs = append(c.errs, err) }

func newDep(codec string, c *collected) depacketizer {
	if codec == synth.CodecH265 {
		return newH265Depacketizer(c.emit, c.fail)
	}
	return newH264Depacketizer(c.emit, c.fail)
}

// encode packetizes every unit of the clip with gortsplib's encoder, at
// 3000 ticks per unit.
func encode(t testing.TB, codec string, units [][][]byte, maxPayload int) [][]*rtp.Packet {
	t.Helper()
	var enc func([][]byte) ([]*rtp.Packet, error)
	seq := uint16(65000) // wraps inside the clip
	if codec == synth.CodecH265 {
		e := &rtph265.Encoder{PayloadType: 96, PayloadMaxSize: maxPayload, InitialSequenceNumber: &seq}
		if err := e.Init(); err != nil {
			t.Fatal(err)
		}
		enc = e.Encode
	} else {
		e := &rtph264.Encoder{PayloadType: 96, PacketizationMode: 1, PayloadMaxSize: maxPayload, InitialSequenceNumber: &seq}
		if err := e.Init(); err != nil {
			t.Fatal(err)
		}
		enc = e.Encode
	}
	out := make([][]*rtp.Packet, len(units))
	for i, au := range units {
		pkts, err := enc(au)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkts {
			p.Timestamp = uint32(i * 3000)
		}
		out[i] = pkts
	}
	return out
}

// push marshals p and feeds it through parseRTP, as the read loop does.
func push(t *testing.T, d depacketizer, p *rtp.Packet) {
	t.Helper()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	rp, err := parseRTP(b)
	if err != nil {
		t.Fatal(err)
	}
	d.push(&rp)
}

func clipUnits(t testing.TB, codec string) [][][]byte {
	t.Helper()
	clip, err := synth.Fixture(codec, true)
	if err != nil {
		t.Fatal(err)
	}
	var units [][][]byte
	for _, u := range clip.Units {
		units = append(units, u.NALUs)
	}
	return units
}

func sameUnits(t *testing.T, got, want [][][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d units, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("unit %d: %d nal units, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if !bytes.Equal(got[i][j], want[i][j]) {
				t.Fatalf("unit %d nal unit %d differs", i, j)
			}
		}
	}
}

// TestDepacketizeRoundTrip: the access units of the synthetic clips,
// packetized by gortsplib's encoders (single NAL units, aggregation and
// fragmentation), come back byte for byte, with their timestamps, through
// a sequence number wrap.
func TestDepacketizeRoundTrip(t *testing.T) {
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		for _, maxPayload := range []int{1450, 200} {
			units := clipUnits(t, codec)
			var c collected
			d := newDep(codec, &c)
			for _, pkts := range encode(t, codec, units, maxPayload) {
				for _, p := range pkts {
					push(t, d, p)
				}
			}
			if len(c.errs) != 0 {
				t.Fatalf("%s/%d: errors %v", codec, maxPayload, c.errs)
			}
			sameUnits(t, c.units, units)
			for i, ts := range c.ts {
				if ts != uint32(i*3000) {
					t.Fatalf("%s: unit %d at %d, want %d", codec, i, ts, i*3000)
				}
			}
		}
	}
}

// TestDepacketizeWithoutMarker: a camera that never sets the marker bit has
// its units cut at each new timestamp.
func TestDepacketizeWithoutMarker(t *testing.T) {
	units := clipUnits(t, synth.CodecH264)
	var c collected
	d := newDep(synth.CodecH264, &c)
	for _, pkts := range encode(t, synth.CodecH264, units, 1450) {
		for _, p := range pkts {
			p.Marker = false
			push(t, d, p)
		}
	}
	// The last unit waits for a next timestamp.
	sameUnits(t, c.units, units[:len(units)-1])
}

// TestDepacketizeLoss: a unit with a lost fragment is dropped whole and
// reported; the next unit comes through. A stream joined in the middle of
// a fragmented unit drops that first unit silently.
func TestDepacketizeLoss(t *testing.T) {
	units := clipUnits(t, synth.CodecH264)
	pkts := encode(t, synth.CodecH264, units, 200)
	if len(pkts[0]) < 4 {
		t.Fatal("first unit too small to fragment")
	}

	var c collected
	d := newDep(synth.CodecH264, &c)
	for i, p := range pkts[0] {
		if i == 2 {
			continue // lost
		}
		push(t, d, p)
	}
	for _, p := range pkts[1] {
		push(t, d, p)
	}
	if len(c.units) != 1 || len(c.errs) != 0 {
		t.Fatalf("joined mid-unit: %d units, errors %v; want 1 unit and no error", len(c.units), c.errs)
	}

	// Once in step, a loss is an error.
	for i, p := range pkts[2] {
		if i == 1 && len(pkts[2]) > 2 {
			continue
		}
		push(t, d, p)
	}
	for _, p := range pkts[3] {
		push(t, d, p)
	}
	wantUnits := 2
	if len(pkts[2]) > 2 {
		if len(c.errs) != 1 || !errors.Is(c.errs[0], errPacketLost) && !errors.Is(c.errs[0], errFragNoStart) {
			t.Fatalf("errors %v, want one lost-packet error", c.errs)
		}
	} else {
		wantUnits = 3
	}
	if len(c.units) != wantUnits {
		t.Fatalf("%d units, want %d", len(c.units), wantUnits)
	}
	sameUnits(t, c.units[len(c.units)-1:], units[3:4])
}

// TestDepacketizeAggregates covers STAP-A padding, malformed aggregates and
// unsupported packet types.
func TestDepacketizeAggregates(t *testing.T) {
	idr := []byte{0x65, 0x88, 0x84, 0x00}
	sps := []byte{0x67, 0x42, 0x00, 0x1f}
	stap := func(extra ...byte) []byte {
		b := []byte{0x78, 0, byte(len(sps))}
		b = append(b, sps...)
		b = append(b, 0, byte(len(idr)))
		b = append(b, idr...)
		return append(b, extra...)
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		units   int
		err     error
	}{
		{"stap-a", stap(), 1, nil},
		{"stap-a with zero padding", stap(0, 0, 0), 1, nil},
		{"stap-a size past the end", append([]byte{0x78, 0, 40}, idr...), 0, errAggregate},
		{"stap-a with junk after", stap(0, 0, 7), 0, errAggregate},
		{"empty stap-a", []byte{0x78}, 0, errAggregate},
		{"mtap16", []byte{0x7a, 1, 2, 3}, 0, errPacketType},
		{"fu-a too short", []byte{0x7c}, 0, errPayloadShort},
		{"empty payload", nil, 0, errPayloadShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c collected
			d := newDep(synth.CodecH264, &c)
			d.(*h264Depacketizer).au.synced = true
			d.push(&rtpPacket{marker: true, ts: 1, payload: tc.payload})
			if len(c.units) != tc.units {
				t.Errorf("%d units, want %d", len(c.units), tc.units)
			}
			if tc.err == nil && len(c.errs) != 0 || tc.err != nil && (len(c.errs) != 1 || !errors.Is(c.errs[0], tc.err)) {
				t.Errorf("errors %v, want %v", c.errs, tc.err)
			}
			if tc.units == 1 && (len(c.units[0]) != 2 || !bytes.Equal(c.units[0][1], idr)) {
				t.Errorf("unit %x", c.units[0])
			}
		})
	}
}

// TestDepacketizeAnnexB: NAL units wrapped in start codes are split.
func TestDepacketizeAnnexB(t *testing.T) {
	sps := []byte{0x67, 0x42, 0x00, 0x1f}
	pps := []byte{0x68, 0xce, 0x38, 0x80}
	idr := []byte{0x65, 0x88, 0x84, 0x00}
	var wrapped []byte
	for _, n := range [][]byte{sps, pps, idr} {
		wrapped = append(append(wrapped, 0, 0, 0, 1), n...)
	}
	var c collected
	d := newDep(synth.CodecH264, &c)
	d.push(&rtpPacket{marker: true, ts: 1, payload: wrapped})
	d.push(&rtpPacket{marker: true, ts: 2, payload: idr})
	if len(c.units) != 2 || len(c.errs) != 0 {
		t.Fatalf("%d units, errors %v", len(c.units), c.errs)
	}
	sameUnits(t, c.units[:1], [][][]byte{{sps, pps, idr}})
}

// TestDepacketizeLimits: a unit past the size or NAL unit count limits is
// dropped, and the memory it held is let go.
func TestDepacketizeLimits(t *testing.T) {
	var c collected
	d := newDep(synth.CodecH264, &c)
	d.(*h264Depacketizer).au.synced = true
	frag := make([]byte, 1400)
	frag[0], frag[1] = 0x7c, 0x85 // FU-A start of an IDR
	d.push(&rtpPacket{seq: 0, ts: 1, payload: frag})
	frag[1] = 0x05
	for i := 1; i < 8*1024*1024/1398+10; i++ {
		d.push(&rtpPacket{seq: uint16(i), ts: 1, payload: frag})
	}
	d.push(&rtpPacket{seq: 9999, ts: 1, marker: true, payload: []byte{0x7c, 0x45, 1}})
	if len(c.units) != 0 || len(c.errs) != 1 || !errors.Is(c.errs[0], errUnitTooLarge) {
		t.Fatalf("%d units, errors %v; want the unit dropped as too large", len(c.units), c.errs)
	}
	if cap(d.(*h264Depacketizer).au.buf) > 9<<20 {
		t.Errorf("buffer of %d bytes kept", cap(d.(*h264Depacketizer).au.buf))
	}

	c = collected{}
	d = newDep(synth.CodecH264, &c)
	d.(*h264Depacketizer).au.synced = true
	for i := range 60 {
		d.push(&rtpPacket{seq: uint16(i), ts: 7, marker: i == 59, payload: []byte{0x06, 0x01}})
	}
	if len(c.units) != 0 || len(c.errs) != 1 || !errors.Is(c.errs[0], errTooManyNALUs) {
		t.Fatalf("%d units, errors %v; want the unit dropped for its NAL unit count", len(c.units), c.errs)
	}
}

// TestParseRTP compares the parser with pion's on packets with CSRCs, a
// header extension and padding, and checks its refusals.
func TestParseRTP(t *testing.T) {
	pkt := &rtp.Packet{
		Header: rtp.Header{
			Version: 2, Padding: true, Marker: true, PayloadType: 96, SequenceNumber: 65535,
			Timestamp: 4294967000, SSRC: 0xdeadbeef, CSRC: []uint32{1, 2},
			Extension: true, ExtensionProfile: 0xbede,
		},
		Payload:     []byte{1, 2, 3, 4, 5},
		PaddingSize: 3,
	}
	if err := pkt.SetExtension(1, []byte{0xaa, 0xbb}); err != nil {
		t.Fatal(err)
	}
	b, err := pkt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseRTP(b)
	if err != nil {
		t.Fatal(err)
	}
	if !p.marker || p.pt != 96 || p.seq != 65535 || p.ts != 4294967000 || p.ssrc != 0xdeadbeef || !bytes.Equal(p.payload, pkt.Payload) {
		t.Errorf("parsed %+v", p)
	}
	for name, b := range map[string][]byte{
		"short":             {0x80, 96, 0, 1},
		"version 1":         append([]byte{0x40, 96}, make([]byte, 12)...),
		"csrc past the end": append([]byte{0x8f, 96}, make([]byte, 12)...),
		"zero padding":      append([]byte{0xa0, 96}, make([]byte, 12)...),
		"padding too large": append(append([]byte{0xa0, 96}, make([]byte, 10)...), 1, 99),
		"extension cut":     append([]byte{0x90, 96}, make([]byte, 12)...),
	} {
		if _, err := parseRTP(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDepacketize: any packets, cut anywhere, never panic either
// depacketizer, and every unit emitted holds NAL units within the limits.
func FuzzDepacketize(f *testing.F) {
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		units := clipUnits(f, codec)
		for _, pkts := range encode(f, codec, units[:2], 300) {
			var stream []byte
			for _, p := range pkts {
				b, _ := p.Marshal()
				stream = append(stream, byte(len(b)>>8), byte(len(b)))
				stream = append(stream, b...)
			}
			f.Add(stream)
		}
	}
	f.Add([]byte{0, 5, 0x80, 0xe0, 0, 1, 0x7c})
	f.Fuzz(func(t *testing.T, stream []byte) {
		for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
			var c collected
			d := newDep(codec, &c)
			b := stream
			for len(b) >= 2 {
				n := int(b[0])<<8 | int(b[1])
				b = b[2:]
				n = min(n, len(b))
				if p, err := parseRTP(b[:n]); err == nil {
					d.push(&p)
				}
				b = b[n:]
			}
			for _, u := range c.units {
				if len(u) == 0 {
					t.Fatal("empty unit emitted")
				}
				for _, n := range u {
					if len(n) == 0 {
						t.Fatal("empty nal unit emitted")
					}
				}
			}
		}
	})
}
