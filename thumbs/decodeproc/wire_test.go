package decodeproc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decoder"
)

// testRequests are valid requests, also the seeds of FuzzParseRequest.
var testRequests = map[string]*Request{
	"still jpeg": {Codec: media.H264, Still: true, Units: [][][]byte{{{0x67, 1, 2}, {0x68, 3}, {0x65, 4, 5, 6}}},
		Image: JPEG, ImageWidth: 320, Quality: 75},
	"motion gop": {Codec: media.H265, Fast: true, Units: [][][]byte{{{0x40, 1}, {0x42, 2}, {0x44, 3}, {0x26, 4}}, {{0x02, 5}}, {{0x02, 6}}},
		GrayWidth: 160, GrayFirst: true, GrayLast: true},
	"raw":        {Codec: media.H264, Units: [][][]byte{{{0x65}}}, Image: YCbCr},
	"empty nalu": {Codec: media.H264, Units: [][][]byte{{{}}}},
}

func TestRequestRoundTrip(t *testing.T) {
	for name, req := range testRequests {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			w := bufio.NewWriter(&b)
			if err := writeRequest(w, 7, req); err != nil {
				t.Fatal(err)
			}
			h, payload, err := readFrame(&b, nil)
			if err != nil || h.typ != frameDecode || h.id != 7 {
				t.Fatalf("frame %+v: %v", h, err)
			}
			got, err := parseRequest(payload)
			if err != nil {
				t.Fatal(err)
			}
			want := *req
			if want.Image != JPEG {
				want.Quality = 0
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestRequestRefused(t *testing.T) {
	unit := [][][]byte{{{0x65}}}
	for _, tc := range []struct {
		name string
		req  Request
		want error
	}{
		{"codec", Request{Codec: media.AAC, Units: unit}, ErrBadRequest},
		{"no units", Request{Codec: media.H264}, ErrBadRequest},
		{"empty unit", Request{Codec: media.H264, Units: [][][]byte{{}}}, ErrBadRequest},
		{"too many units", Request{Codec: media.H264, Units: make([][][]byte, MaxUnits+1)}, ErrBadRequest},
		{"quality", Request{Codec: media.H264, Units: unit, Image: JPEG}, ErrBadRequest},
		{"width", Request{Codec: media.H264, Units: unit, GrayWidth: MaxSide + 1}, ErrBadRequest},
		{"format", Request{Codec: media.H264, Units: unit, Image: 3}, ErrBadRequest},
		{"too large", Request{Codec: media.H264, Units: [][][]byte{{make([]byte, MaxPayload)}}}, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.req.check(); !errors.Is(err, tc.want) {
				t.Fatalf("check: %v, want %v", err, tc.want)
			}
			var b bytes.Buffer
			if err := writeRequest(bufio.NewWriter(&b), 1, &tc.req); !errors.Is(err, tc.want) || b.Len() != 0 {
				t.Fatalf("write: %v (%d bytes written), want %v and nothing written", err, b.Len(), tc.want)
			}
		})
	}
}

// gray returns a w×h luma plane of a gradient.
func gray(w, h int) *image.Gray {
	g := image.NewGray(image.Rect(0, 0, w, h))
	for i := range g.Pix {
		g.Pix[i] = byte(i)
	}
	return g
}

// testResults are valid results, also the seeds of FuzzParseResult.
func testResults() map[string]*Result {
	ycc := image.NewYCbCr(image.Rect(0, 0, 5, 3), image.YCbCrSubsampleRatio420)
	for i := range ycc.Y {
		ycc.Y[i] = byte(3 * i)
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = byte(i), byte(255-i)
	}
	return map[string]*Result{
		"jpeg": {Pictures: 1, Last: 0, Width: 1280, Height: 720, JPEG: []byte{0xff, 0xd8, 0xff, 0xd9}, ImageWidth: 320, ImageHeight: 180,
			CPU: 3 * time.Millisecond, cpu: time.Second},
		"grays": {Pictures: 30, Last: 29, Width: 640, Height: 360, GrayFirst: gray(16, 9), GrayLast: gray(16, 9)},
		"ycbcr": {Pictures: 2, Last: 4, Width: 5, Height: 3, YCbCr: ycc, ImageWidth: 5, ImageHeight: 3},
	}
}

func TestResultRoundTrip(t *testing.T) {
	for name, res := range testResults() {
		t.Run(name, func(t *testing.T) {
			b, err := marshalResult(res)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseResult(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, res) {
				t.Fatalf("got %+v, want %+v", got, res)
			}
		})
	}
}

func TestResultRefused(t *testing.T) {
	good, err := marshalResult(testResults()["grays"])
	if err != nil {
		t.Fatal(err)
	}
	jpeg, err := marshalResult(testResults()["jpeg"])
	if err != nil {
		t.Fatal(err)
	}
	// Offsets: pictures 0, last 4, size 8, cpu 12 and 20, first plane's
	// size 28; without planes, the image's format at 36, its byte size
	// at 41.
	for _, tc := range []struct {
		name    string
		payload []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)-1]},
		{"left over", append(bytes.Clone(good), 0)},
		{"no picture", set(good, 0, 0, 0, 0, 0)},
		{"last past the units", set(good, 4, 0xff, 0xff, 0xff, 0xff)},
		{"zero size", set(good, 8, 0, 0)},
		{"plane too wide", set(good, 28, 0xff, 0xff)},
		{"plane of zero height", set(good, 30, 0, 0)},
		{"unknown image format", set(jpeg, 36, 9)},
		{"jpeg of zero width", set(jpeg, 37, 0, 0)},
		{"jpeg size past the payload", set(jpeg, 41, 0x7f, 0xff, 0xff, 0xff)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseResult(tc.payload); !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want ErrProtocol", err)
			}
		})
	}
}

func TestErrorFrame(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{decoder.ErrDecode, decoder.ErrDecode},
		{decoder.ErrNoPicture, decoder.ErrNoPicture},
		{ErrTestOps, ErrTestOps},
		{errors.New("something else"), errDecoderProcess},
	} {
		got, cpu, err := parseError(marshalError(tc.err, time.Second))
		if err != nil || !errors.Is(got, tc.want) || got.Error() != tc.err.Error() || cpu != time.Second {
			t.Fatalf("%v: got %v (%v), cpu %v, want %v", tc.err, got, err, cpu, tc.want)
		}
	}
	// A message from the child is bounded and made printable.
	long := errors.New("bad\x1b[31m\n" + strings.Repeat("x", 2*maxMessage))
	got, _, err := parseError(marshalError(long, 0))
	if err != nil || len(got.Error()) != maxMessage || strings.ContainsAny(got.Error(), "\x1b\n") {
		t.Fatalf("got %q (%v)", got, err)
	}
	if _, _, err := parseError([]byte{codeLast + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrProtocol) {
		t.Fatalf("unknown code: %v", err)
	}
}

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []hello{{}, {decoding: true, seccomp: true, testOps: true, memory: 512 << 20}} {
		got, err := parseHello(marshalHello(h))
		if err != nil || got != h {
			t.Fatalf("got %+v (%v), want %+v", got, err, h)
		}
	}
	if _, err := parseHello([]byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrProtocol) {
		t.Fatalf("unknown flag: %v", err)
	}
}

// frame returns a frame's bytes.
func frame(typ uint8, id uint32, payload []byte) []byte {
	return append(appendHeader(nil, typ, id, len(payload)), payload...)
}

func TestReadFrameRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"short header", []byte{'V', 'D', 1}, io.ErrUnexpectedEOF},
		{"magic", append([]byte{'X'}, frame(frameDecode, 1, nil)[1:]...), ErrProtocol},
		{"version", set(frame(frameDecode, 1, nil), 2, 2), ErrProtocol},
		{"type 0", frame(0, 1, nil), ErrProtocol},
		{"unknown type", frame(frameLast+1, 1, nil), ErrProtocol},
		{"too large", set(frame(frameDecode, 1, nil), 8, 0x7f, 0xff, 0xff, 0xff), ErrProtocol},
		{"short payload", frame(frameDecode, 1, []byte{1, 2, 3})[:headerSize+2], io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := readFrame(bytes.NewReader(tc.in), nil); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// set returns a copy of b with v written at off.
func set(b []byte, off int, v ...byte) []byte {
	c := bytes.Clone(b)
	copy(c[off:], v)
	return c
}

// A header announcing the largest payload allowed, followed by a few
// bytes, costs a step of memory, not the payload.
func TestReadFrameAllocatesAsBytesArrive(t *testing.T) {
	in := binary.BigEndian.AppendUint32(appendHeader(nil, frameDecode, 1, MaxPayload)[:8], MaxPayload)
	in = append(in, 1, 2, 3)
	_, buf, err := readFrame(bytes.NewReader(in), nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", err)
	}
	if cap(buf) > 2*readStep {
		t.Fatalf("%d bytes allocated for 3 received", cap(buf))
	}
}

func TestPrintable(t *testing.T) {
	if got := printable([]byte("ok \x00\xff\x7f~\n")); got != "ok ???~?" {
		t.Fatalf("got %q", got)
	}
	if got := sanitize([]byte("a\x1b\nb"), true); got != "a?\nb" {
		t.Fatalf("lines: got %q", got)
	}
}
