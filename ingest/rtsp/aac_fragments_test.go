package rtsp

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/pion/rtp"
)

// rfc3640Fragments splits frame over packets of at most mtu payload bytes
// the way GStreamer's rtpmp4gpay does (RFC 3640 3.2.3.1): each fragment
// with one AU-header (13-bit size, 3-bit index) carrying the size of the
// whole frame, the marker bit on the last.
func rfc3640Fragments(frame []byte, mtu int) []*rtp.Packet {
	var pkts []*rtp.Packet
	hdr := []byte{0x00, 0x10, byte(len(frame) >> 5), byte(len(frame) << 3)}
	for off, seq := 0, uint16(100); off < len(frame); seq++ {
		n := min(mtu-len(hdr), len(frame)-off)
		p := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 97, SequenceNumber: seq, Timestamp: 1000},
			Payload: append(append([]byte(nil), hdr...), frame[off:off+n]...)}
		off += n
		p.Marker = off == len(frame)
		pkts = append(pkts, p)
	}
	return pkts
}

// TestAACFragmentsRFC3640: an AAC frame fragmented over three packets whose
// AU-size is the whole frame's, as RFC 3640 has it and GStreamer sends it,
// comes out whole; so does one whose fragments carry their own size (the
// way gortsplib's encoder sends it), and a frame in one packet. Before,
// gortsplib's decoder dropped every fragmented frame of the first kind
// ("payload is too short"): GStreamer's audio with a small MTU was lost.
func TestAACFragmentsRFC3640(t *testing.T) {
	frame := make([]byte, 304)
	for i := range frame {
		frame[i] = byte(i * 7)
	}
	enc := &rtpmpeg4audio.Encoder{PayloadType: 97, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3, PayloadMaxSize: 108}
	if err := enc.Init(); err != nil {
		t.Fatal(err)
	}
	own, err := enc.Encode([][]byte{frame})
	if err != nil {
		t.Fatal(err)
	}
	whole := &rtp.Packet{Header: rtp.Header{Marker: true}, Payload: append([]byte{0x00, 0x10, byte(len(frame) >> 5), byte(len(frame) << 3)}, frame...)}
	for _, tc := range []struct {
		name string
		pkts []*rtp.Packet
	}{
		{"rfc 3640", rfc3640Fragments(frame, 108)},
		{"fragment sizes", own},
		{"one packet", []*rtp.Packet{whole}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := &rtpmpeg4audio.Decoder{SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3}
			if err := dec.Init(); err != nil {
				t.Fatal(err)
			}
			var fix aacFragments
			var got [][]byte
			for _, p := range tc.pkts {
				fix.normalize(p.Payload, p.Marker, dec.SizeLength, dec.IndexLength)
				aus, err := dec.Decode(p)
				if errors.Is(err, rtpmpeg4audio.ErrMorePacketsNeeded) {
					continue
				}
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				got = append(got, aus...)
			}
			if len(got) != 1 || !bytes.Equal(got[0], frame) {
				t.Fatalf("%d frames out, want the frame whole", len(got))
			}
		})
	}
}
