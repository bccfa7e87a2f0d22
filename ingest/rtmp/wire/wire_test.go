package wire

import (
	"bytes"
	"errors"
	"io"
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

// halfMessage is a chunk stream starting, on csid, a message of length
// bytes (more than 128) of which the first chunk (128 bytes) is sent.
func halfMessage(csid byte, length int) []byte {
	b := []byte{csid, 0, 0, 0, byte(length >> 16), byte(length >> 8), byte(length), 9, 1, 0, 0, 0}
	return append(b, make([]byte, 128)...)
}

// TestBudget: connections sharing a budget cannot hold more than it
// together; what a connection holds goes back when it releases, or when it
// moves to limits without the budget.
func TestBudget(t *testing.T) {
	budget := NewBudget(3000)
	limits := Limits{MaxMessageSize: 2000, MaxChunkStreams: 4, Budget: budget}
	read := func(data []byte) (*ChunkReader, error) {
		r := NewChunkReader(bytes.NewReader(data), limits)
		_, err := r.ReadMessage()
		return r, err
	}
	// Two messages of 1000 bytes half sent: 2000 bytes drawn.
	a, err := read(append(halfMessage(3, 1000), halfMessage(4, 1000)...))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("first connection: %v, want EOF (messages incomplete)", err)
	}
	if got := budget.Used(); got != 2000 {
		t.Errorf("budget used %d, want 2000", got)
	}
	// A second connection's 1500-byte message does not fit.
	if _, err := read(halfMessage(3, 1500)); !errors.Is(err, ErrBudget) {
		t.Errorf("second connection: %v, want ErrBudget", err)
	}
	if got := budget.Used(); got != 2000 {
		t.Errorf("budget used %d after the refusal, want 2000", got)
	}
	// The first one authenticates: its bytes leave the budget.
	if err := a.SetLimits(Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := budget.Used(); got != 0 {
		t.Errorf("budget used %d after SetLimits, want 0", got)
	}
	b, err := read(halfMessage(3, 1500))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("second connection again: %v", err)
	}
	b.Release()
	a.Release()
	if got := budget.Used(); got != 0 {
		t.Errorf("budget used %d after Release, want 0", got)
	}
}

// TestLyingLengthCostsWhatArrives: a header announcing an 8 MiB message
// with 128 bytes behind it makes the reader hold at most readPiece; a
// message received whole holds no more than twice its length on the way.
func TestLyingLengthCostsWhatArrives(t *testing.T) {
	r := NewChunkReader(bytes.NewReader(halfMessage(3, 8<<20-1)), Limits{})
	if _, err := r.ReadMessage(); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if r.buffered > readPiece {
		t.Errorf("%d bytes held for 128 received", r.buffered)
	}
	var b bytes.Buffer
	w := NewChunkWriter(&b)
	_ = w.WriteMessage(2, &Message{Type: TypeSetChunkSize, Payload: []byte{0, 0, 0x10, 0}})
	w.SetChunkSize(4096)
	payload := bytes.Repeat([]byte{7}, 300<<10)
	_ = w.WriteMessage(6, &Message{Type: TypeVideo, Payload: payload})
	c := NewConn(&rw{r: &b}, Limits{})
	m, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Payload, payload) || cap(m.Payload) != len(payload) {
		t.Errorf("payload of %d bytes (capacity %d), want %d", len(m.Payload), cap(m.Payload), len(payload))
	}
}

// BenchmarkChunkReader reads 250 video messages (a 200 KiB keyframe every
// 25, 20 KiB frames between them) sent with a chunk size of 4096, as an
// encoder publishing 1080p at about 4 Mbit/s does; ns/frame is per message.
func BenchmarkChunkReader(b *testing.B) {
	var buf bytes.Buffer
	w := NewChunkWriter(&buf)
	_ = w.WriteMessage(2, &Message{Type: TypeSetChunkSize, Payload: []byte{0, 0, 0x10, 0}})
	w.SetChunkSize(4096)
	const frames = 250
	total := 0
	for i := range frames {
		size := 20 << 10
		if i%25 == 0 {
			size = 200 << 10
		}
		total += size
		_ = w.WriteMessage(6, &Message{Type: TypeVideo, StreamID: 1, Timestamp: uint32(i * 40), Payload: bytes.Repeat([]byte{byte(i)}, size)})
	}
	data := buf.Bytes()
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		c := NewConn(&rw{r: bytes.NewReader(data)}, Limits{})
		for {
			if _, err := c.ReadMessage(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*frames), "ns/frame")
}
