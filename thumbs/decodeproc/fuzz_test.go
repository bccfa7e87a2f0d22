package decodeproc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/vigia/vigia/thumbs/decoder"
)

// requestPayload returns the payload of req's decode frame.
func requestPayload(tb testing.TB, req *Request) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := writeRequest(w, 1, req); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()[headerSize:]
}

// FuzzParseRequest: the child's parser of requests never panics, and what
// it accepts is a request the parent could have sent, which reads back the
// same.
func FuzzParseRequest(f *testing.F) {
	for _, req := range testRequests {
		f.Add(requestPayload(f, req))
	}
	f.Add([]byte{codecH264, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, payload []byte) {
		req, err := parseRequest(payload)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		if _, err := req.check(); err != nil {
			t.Fatalf("accepted a request the parent would refuse: %v", err)
		}
		again, err := parseRequest(requestPayload(t, req))
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip: %+v (%v), want %+v", again, err, req)
		}
	})
}

// FuzzParseResult: the parent's parser of results (what a possibly
// compromised child sends) never panics, and what it accepts encodes and
// reads back the same.
func FuzzParseResult(f *testing.F) {
	for _, res := range testResults() {
		b, err := marshalResult(res)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		res, err := parseResult(payload)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		b, err := marshalResult(res)
		if err != nil {
			t.Fatalf("accepted a result that does not encode: %v", err)
		}
		again, err := parseResult(b)
		if err != nil || !reflect.DeepEqual(again, res) {
			t.Fatalf("round trip: %+v (%v), want %+v", again, err, res)
		}
	})
}

// FuzzReadFrames: the parent reading a child's stream (any bytes) never
// panics: each frame is read within the limits and its payload parsed by
// the parser of its type.
func FuzzReadFrames(f *testing.F) {
	f.Add(frame(frameHello, 0, marshalHello(hello{decoding: true, memory: 1 << 28})))
	for _, res := range testResults() {
		b, _ := marshalResult(res)
		f.Add(append(frame(frameHello, 0, marshalHello(hello{decoding: true})), frame(frameResult, 1, b)...))
	}
	f.Add(frame(frameError, 3, marshalError(decoder.ErrDecode, 5)))
	f.Add(frame(framePong, 2, make([]byte, 16)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := bytes.NewReader(stream)
		for {
			h, payload, err := readFrame(r, nil)
			if err != nil {
				return
			}
			if len(payload) != h.size || h.size > MaxPayload {
				t.Fatalf("payload of %d bytes for a header of %d", len(payload), h.size)
			}
			switch h.typ {
			case frameHello:
				_, _ = parseHello(payload)
			case frameResult:
				_, _ = parseResult(payload)
			case frameError:
				_, _, _ = parseError(payload)
			case frameInspect:
				_ = printable(payload)
			}
		}
	})
}

// FuzzServe: a decoder process fed any bytes (requests for the real
// decoder among them) never panics and only writes well-formed frames:
// its hello, then one reply per request it read.
func FuzzServe(f *testing.F) {
	seed := func(frames ...[]byte) []byte { return bytes.Join(frames, nil) }
	for _, req := range testRequests {
		f.Add(seed(frame(frameDecode, 1, requestPayload(f, req))))
	}
	f.Add(seed(frame(framePing, 1, binary.BigEndian.AppendUint32(nil, 8)), frame(frameTest, 2, marshalTest(testCrash, 0))))
	f.Add(seed(frame(frameResult, 1, nil), frame(frameDecode, 2, []byte{9})))
	f.Fuzz(func(t *testing.T, stream []byte) {
		var out bytes.Buffer
		s := &server{hello: hello{decoding: decoder.Available()}, dec: newDecoders()}
		_ = s.serve(bytes.NewReader(stream), &out)
		r := bytes.NewReader(out.Bytes())
		h, _, err := readFrame(r, nil)
		if err != nil || h.typ != frameHello {
			t.Fatalf("first frame %+v: %v", h, err)
		}
		for {
			h, payload, err := readFrame(r, nil)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatalf("the process wrote a frame that does not read: %v", err)
			}
			switch h.typ {
			case frameResult:
				_, err = parseResult(payload)
			case frameError:
				_, _, err = parseError(payload)
			case framePong:
			default:
				t.Fatalf("reply of type %d", h.typ)
			}
			if err != nil {
				t.Fatalf("reply to %d does not parse: %v", h.id, err)
			}
		}
	})
}
