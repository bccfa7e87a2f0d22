package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestChunkRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewChunkWriter(&b)
	msgs := []*Message{
		{Type: TypeCommandAMF0, Payload: AppendAMF0(nil, "connect", 1)},
		{Type: TypeVideo, StreamID: 1, Timestamp: 40, Payload: bytes.Repeat([]byte{7}, 1000)},
		{Type: TypeAudio, StreamID: 1, Timestamp: 0x1000005, Payload: bytes.Repeat([]byte{8}, 300)},
	}
	for i, m := range msgs {
		if err := w.WriteMessage(uint32(3+i*100), m); err != nil {
			t.Fatal(err)
		}
	}
	r := NewChunkReader(&b, Limits{})
	for _, want := range msgs {
		got, err := r.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != want.Type || got.Timestamp != want.Timestamp || got.StreamID != want.StreamID || !bytes.Equal(got.Payload, want.Payload) {
			t.Errorf("got type %d ts %d sid %d len %d, want type %d ts %d", got.Type, got.Timestamp, got.StreamID, len(got.Payload), want.Type, want.Timestamp)
		}
	}
}

func TestChunkLimits(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"message longer than the limit", []byte{0x03, 0, 0, 0, 0xff, 0xff, 0xff, 9, 0, 0, 0, 0}, ErrMessageTooLarge},
		{"compressed header on a new stream", []byte{0x43, 0, 0, 0, 0, 0, 1, 9}, ErrBadChunk},
		{"too many chunk streams", nil, ErrTooManyStreams},
	}
	// Five chunk streams each starting a 1000-byte message with a limit of 4.
	var many []byte
	for cs := byte(3); cs < 8; cs++ {
		many = append(many, cs, 0, 0, 0, 0, 0x03, 0xe8, 9, 0, 0, 0, 0)
		many = append(many, make([]byte, 128)...)
	}
	cases[2].data = many
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewChunkReader(bytes.NewReader(tc.data), Limits{MaxMessageSize: 1 << 16, MaxChunkStreams: 4})
			_, err := r.ReadMessage()
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
	r := NewChunkReader(bytes.NewReader(nil), Limits{})
	for _, n := range []uint32{0, MaxChunkSize + 1} {
		if err := r.SetChunkSize(n); !errors.Is(err, ErrChunkSize) {
			t.Errorf("chunk size %d: %v", n, err)
		}
	}
}

func TestVideoTagRoundTrip(t *testing.T) {
	for _, tc := range []VideoTag{
		{Codec: VideoH264, Key: true, Kind: KindFrames, CTS: 80, Data: []byte{0, 0, 0, 1, 0x65}},
		{Codec: VideoH265, Kind: KindFrames, CTS: -33, Data: []byte{0, 0, 0, 1, 0x02}},
		{Codec: VideoH265, Enhanced: true, Key: true, Kind: KindFrames, CTS: 40, Data: []byte{0, 0, 0, 1, 0x26}},
		{Codec: VideoH264, Enhanced: true, Kind: KindConfig, Data: []byte{1}},
	} {
		got, err := ParseVideoTag(tc.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		if got.Codec != tc.Codec || got.Enhanced != tc.Enhanced || got.Key != tc.Key || got.Kind != tc.Kind || got.CTS != tc.CTS || !bytes.Equal(got.Data, tc.Data) {
			t.Errorf("got %+v, want %+v", got, tc)
		}
	}
	if _, err := ParseVideoTag([]byte{0x14, 0}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("VP6 tag: %v, want unsupported", err)
	}
	if _, err := ParseVideoTag([]byte{0x90, 'a', 'v', '0', '1'}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("av01 tag: %v, want unsupported", err)
	}
	if _, err := SplitNALUs([]byte{0, 0, 0, 9, 1}, 4); !errors.Is(err, ErrFLV) {
		t.Errorf("lying nal length: %v", err)
	}
}
