package rtsp

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
)

// discardConn is a connection whose writes go nowhere.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error)      { return len(b), nil }
func (discardConn) SetWriteDeadline(time.Time) error { return nil }
func (discardConn) SetReadDeadline(time.Time) error  { return nil }
func (discardConn) Close() error                     { return nil }

// streamConn is a connection that reads stream and writes nowhere.
type streamConn struct {
	discardConn
	stream io.Reader
}

func (c streamConn) Read(p []byte) (int, error) { return c.stream.Read(p) }

// streamSession returns a session whose connection reads stream, as after
// PLAY.
func streamSession(stream io.Reader, timeout time.Duration) *tcpSession {
	s := &tcpSession{timeout: timeout, userAgent: userAgent, nc: discardConn{}}
	s.tc = &timedConn{Conn: streamConn{stream: stream}}
	s.br = bufio.NewReaderSize(s.tc, sessionReadBuffer)
	return s
}

// videoReader returns a reader of one video track of format f, handing
// units to sink, and a session reading stream after PLAY (channel 0).
func videoReader(t testing.TB, f format.Format, sink ingest.Sink, stream io.Reader) (*reader, *tcpSession) {
	t.Helper()
	desc := &description.Session{Medias: []*description.Media{{Type: description.MediaTypeVideo, Formats: []format.Format{f}}}}
	r, err := newReader(desc, false)
	if err != nil {
		t.Fatal(err)
	}
	r.sink = sink
	if err := r.makeHandlers(); err != nil {
		t.Fatal(err)
	}
	return r, streamSession(stream, time.Second)
}

// FuzzReadLoop: whatever a camera sends after PLAY (frames, responses,
// requests, junk, cut anywhere), the read loop never panics and ends with
// an error at the end of the stream.
func FuzzReadLoop(f *testing.F) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		f.Fatal(err)
	}
	enc := &rtph264.Encoder{PayloadType: 96, PacketizationMode: 1, PayloadMaxSize: 500}
	if err := enc.Init(); err != nil {
		f.Fatal(err)
	}
	var stream []byte
	for i, u := range clip.Units[:3] {
		pkts, err := enc.Encode(u.NALUs)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range pkts {
			p.Timestamp = uint32(i * 6000)
			b, _ := p.Marshal()
			fr, _ := base.InterleavedFrame{Channel: 0, Payload: b}.Marshal()
			stream = append(stream, fr...)
		}
	}
	f.Add(stream)
	f.Add(append([]byte("RTSP/1.0 200 OK\r\nCSeq: 3\r\nContent-Length: 2\r\n\r\nok"), stream[:40]...))
	f.Add([]byte("OPTIONS * RTSP/1.0\r\nCSeq: 9\r\n\r\n$\x01\x00\x08\x80\xc8\x00\x01\x00\x00\x00\x01"))
	f.Add([]byte("$\x00\xff\xff\x80"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, s := videoReader(t, &format.H264{PayloadTyp: 96, PacketizationMode: 1}, nopSink{}, bytes.NewReader(data))
		ps := &playState{stats: make([]rtpStats, 1)}
		if err := s.readLoop(r, []int{0}, ps); err == nil {
			t.Fatal("read loop ended without an error")
		}
	})
}

// FuzzDescribe: whatever SDP a camera answers DESCRIBE with, reading it
// (the session, its tracks, their handlers) never panics. Seeded with the
// real cameras' answers of testdata/cameras.
func FuzzDescribe(f *testing.F) {
	for _, fx := range loadCameraFixtures(f) {
		f.Add(fx.sdp)
	}
	u, err := base.ParseURL("rtsp://127.0.0.1:554/cam")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := &tcpSession{}
		res := &base.Response{StatusCode: base.StatusOK, Header: base.Header{"Content-Type": {"application/sdp"}}, Body: body}
		desc, err := s.description(res, u)
		if err != nil {
			return
		}
		r, err := newReader(desc, true)
		if err != nil {
			return
		}
		_ = r.makeHandlers()
	})
}
