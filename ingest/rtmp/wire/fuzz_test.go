package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunkSeeds are chunk streams: a command, a set chunk size followed by a
// long message, extended timestamps, broken headers, and messages left
// half sent (what the budget holds until Release).
func chunkSeeds() [][]byte {
	var b bytes.Buffer
	w := NewChunkWriter(&b)
	_ = w.WriteMessage(3, &Message{Type: TypeCommandAMF0, Payload: AppendAMF0(nil, "connect", 1, Object{{Name: "app", Value: "live"}})})
	_ = w.WriteMessage(2, &Message{Type: TypeSetChunkSize, Payload: []byte{0, 0, 0x10, 0}})
	_ = w.WriteMessage(6, &Message{Type: TypeVideo, Timestamp: 0x1000000, Payload: bytes.Repeat([]byte{1}, 300)})
	partial := append(halfMessage(3, 1000), halfMessage(4, 60000)...) // two messages left half sent
	return [][]byte{b.Bytes(), {0x03}, {0x43, 0, 0, 0, 0xff, 0xff, 0xff, 9}, {0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, partial}
}

func FuzzChunkReader(f *testing.F) {
	for _, s := range chunkSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		budget := NewBudget(1 << 17)
		c := NewConn(&rw{r: bytes.NewReader(data)}, Limits{MaxMessageSize: 1 << 16, MaxChunkStreams: 4, Budget: budget})
		for i := 0; i < 1000; i++ {
			if _, err := c.ReadMessage(); err != nil {
				break
			}
			if i == 2 { // as a server does once the peer authenticated
				if err := c.SetLimits(Limits{MaxMessageSize: 1 << 17, MaxChunkStreams: 8}); err != nil {
					t.Fatal(err)
				}
			}
			if b := c.cr.buffered; b < 0 || b > c.cr.limits.MaxBuffered {
				t.Fatalf("%d bytes buffered, limit %d", b, c.cr.limits.MaxBuffered)
			}
		}
		c.Release()
		if c.cr.buffered != 0 || budget.Used() != 0 {
			t.Fatalf("after Release: %d bytes buffered, %d drawn from the budget", c.cr.buffered, budget.Used())
		}
	})
}

// rw reads from r and discards writes.
type rw struct{ r io.Reader }

func (x *rw) Read(p []byte) (int, error)  { return x.r.Read(p) }
func (x *rw) Write(p []byte) (int, error) { return len(p), nil }

func FuzzAMF0(f *testing.F) {
	f.Add(AppendAMF0(nil, "connect", 1.0, Object{{Name: "app", Value: "live"}, {Name: "list", Value: []any{"hvc1", true, nil}}}))
	f.Add(AppendAMF0(nil, "_result", 2, nil, 1.0, Undefined{}))
	f.Add([]byte{amfStrictArray, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{amfECMAArray, 0, 0, 0, 1, 0, 1, 'a', amfObject, 0, 1, 'b', amfObject})
	f.Add([]byte{amfLongString, 0x7f, 0xff, 0xff, 0xff, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		vals, err := DecodeAMF0(data)
		if err != nil {
			if !errors.Is(err, ErrAMF) {
				t.Fatalf("error %v is not ErrAMF", err)
			}
			return
		}
		again, err := DecodeAMF0(AppendAMF0(nil, vals...))
		if err != nil || len(again) != len(vals) {
			t.Fatalf("re-encoded values do not decode: %v (%d of %d)", err, len(again), len(vals))
		}
	})
}

func FuzzVideoTag(f *testing.F) {
	sps := []byte{0x67, 0x64, 0, 0x1f, 0xac}
	pps := []byte{0x68, 0xee, 0x3c, 0x80}
	f.Add(VideoTag{Codec: VideoH264, Key: true, Kind: KindConfig, Data: MarshalAVCConfig(sps, pps)}.Marshal())
	f.Add(VideoTag{Codec: VideoH265, Enhanced: true, Key: true, Kind: KindConfig, Data: MarshalHEVCConfig([]byte{0x40, 1, 0xc}, append([]byte{0x42, 1}, make([]byte, 20)...), []byte{0x44, 1, 0xc1})}.Marshal())
	f.Add(VideoTag{Codec: VideoH265, Kind: KindFrames, CTS: -40, Data: JoinNALUs([][]byte{{0x26, 1, 0xaf}})}.Marshal())
	f.Add(VideoTag{Codec: VideoH264, Enhanced: true, Kind: KindFrames, Data: []byte{0, 0, 0, 9, 0x65}}.Marshal())
	f.Add([]byte{0x17, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x65})
	f.Fuzz(func(t *testing.T, data []byte) {
		tag, err := ParseVideoTag(data)
		if err != nil {
			if !errors.Is(err, ErrFLV) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v is neither ErrFLV nor ErrUnsupported", err)
			}
			return
		}
		switch tag.Kind {
		case KindConfig:
			if tag.Codec == VideoH264 {
				_, _ = ParseAVCConfig(tag.Data)
			} else {
				_, _ = ParseHEVCConfig(tag.Data)
			}
		case KindFrames:
			for _, ls := range []int{1, 2, 4} {
				nalus, err := SplitNALUs(tag.Data, ls)
				if err == nil && len(nalus) > maxNALUs {
					t.Fatalf("%d nal units", len(nalus))
				}
			}
		}
	})
}

func FuzzAudioTag(f *testing.F) {
	f.Add(AudioTag{Format: SoundAAC, Kind: KindConfig, Data: []byte{0x14, 0x08}}.Marshal())
	f.Add(AudioTag{Format: SoundAAC, Kind: KindFrames, Data: []byte{1, 2, 3}}.Marshal())
	f.Add([]byte{0x2f, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		tag, err := ParseAudioTag(data)
		if err == nil && tag.Format == SoundAAC && tag.Kind == KindOther {
			t.Fatalf("aac tag without kind")
		}
	})
}

func FuzzAggregate(f *testing.F) {
	tag := func(typ byte, ts uint32, payload []byte) []byte {
		n := len(payload)
		b := []byte{typ, byte(n >> 16), byte(n >> 8), byte(n), byte(ts >> 16), byte(ts >> 8), byte(ts), byte(ts >> 24), 0, 0, 0}
		b = append(b, payload...)
		m := n + 11
		return append(b, byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
	}
	f.Add(append(tag(9, 100, []byte{0x27, 1, 0, 0, 0}), tag(8, 120, []byte{0xaf, 1, 5})...))
	f.Add(tag(9, 0, nil)[:12])
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, _ := SplitAggregate(&Message{Type: TypeAggregate, Timestamp: 1000, Payload: data})
		total := 0
		for _, m := range msgs {
			total += len(m.Payload)
		}
		if total > len(data) {
			t.Fatalf("%d payload bytes out of %d", total, len(data))
		}
	})
}
