package synth

import (
	"io"
	"net"
	"testing"
	"time"
)

// FuzzFleetConn feeds arbitrary bytes to a fleet connection as a reader
// would send them: requests, interleaved frames, junk. The connection is
// answered or closed, never panics, and ends when the reader closes.
func FuzzFleetConn(f *testing.F) {
	handshake := "OPTIONS rtsp://h/cam-1 RTSP/1.0\r\nCSeq: 1\r\n\r\n" +
		"DESCRIBE rtsp://h/cam-1 RTSP/1.0\r\nCSeq: 2\r\n\r\n" +
		"SETUP rtsp://h/cam-1/trackID=0 RTSP/1.0\r\nCSeq: 3\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n" +
		"SETUP rtsp://h/cam-1/trackID=1 RTSP/1.0\r\nCSeq: 4\r\nTransport: RTP/AVP/TCP;unicast;interleaved=2-3\r\n\r\n" +
		"PLAY rtsp://h/cam-1 RTSP/1.0\r\nCSeq: 5\r\n\r\n"
	for _, seed := range []string{
		handshake,
		handshake + "$\x01\x00\x08\x80\xc9\x00\x01\x00\x00\x00\x01" + "GET_PARAMETER rtsp://h/cam-1 RTSP/1.0\r\nCSeq: 6\r\n\r\n" +
			"TEARDOWN rtsp://h/cam-1 RTSP/1.0\r\nCSeq: 7\r\n\r\n",
		"SETUP rtsp://h/cam-2/trackID=0 RTSP/1.0\r\nCSeq: 1\r\nTransport: RTP/AVP/TCP;unicast;interleaved=254-255\r\n\r\n",
		"SETUP rtsp://h/cam-1/trackID=0 RTSP/1.0\r\nTransport: RTP/AVP;unicast;client_port=1-2\r\n\r\n",
		"DESCRIBE rtsp://h/cam-999999999999 RTSP/1.0\r\n\r\n",
		"PLAY * RTSP/1.0\r\n\r\n",
		"SET_PARAMETER rtsp://h/cam-1 RTSP/1.0\r\nContent-Length: 4\r\n\r\nabcd",
		"$\x00\xff\xff",
		"\x00\x01junk",
		"",
	} {
		f.Add([]byte(seed))
	}
	// A short timeout: the deadline timers of in-memory pipes outlive them.
	fl := NewFleet(FleetConfig{Cameras: 2, Audio: true, SessionTimeout: 200 * time.Millisecond})
	if err := fl.prepare(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		server, client := net.Pipe()
		s := newFleetSession(fl, server)
		served := make(chan struct{})
		go func() {
			defer close(served)
			s.serve()
		}()
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			_, _ = io.Copy(io.Discard, client)
		}()
		_, _ = client.Write(data)
		_ = client.Close()
		<-served
		<-drained
		fl.mu.Lock()
		fl.incoming = fl.incoming[:0] // no scheduler here
		fl.mu.Unlock()
		if s.video.set && s.video.channel%2 != 0 {
			t.Fatalf("video on odd channel %d", s.video.channel)
		}
	})
}
