package rtmp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp/wire"
	"github.com/vigia/vigia/testenv"
)

// dialHandshaken connects to s and completes the handshake.
func dialHandshaken(t *testing.T, s *Server) (net.Conn, *wire.Conn) {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := wire.ClientHandshake(nc); err != nil {
		t.Fatal(err)
	}
	return nc, wire.NewConn(nc, wire.Limits{})
}

// closedByServer reads until the server closes the connection.
func closedByServer(t *testing.T, nc net.Conn) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, nc); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("connection not closed by the server: %v", err)
	}
}

// publishing connects and publishes to camera "cam" with its key.
func publishing(t *testing.T, s *Server) (net.Conn, *wire.Conn) {
	nc, c := dialHandshaken(t, s)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.WriteCommand(0, "connect", 1, wire.Object{{Name: "app", Value: "live"}}))
	must(c.WriteCommand(0, "createStream", 2, nil))
	must(c.WriteCommand(1, "publish", 3, nil, "cam?key="+PushKey(testSecret, "cam"), "live"))
	for {
		m, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if cmd, err := wire.ParseCommand(m); err == nil && cmd.StatusObject().String("code") == "NetStream.Publish.Start" {
			return nc, c
		}
	}
}

func TestServerBadInput(t *testing.T) {
	t.Parallel()
	raw := func(b []byte) func(t *testing.T, s *Server) {
		return func(t *testing.T, s *Server) {
			nc, _ := dialHandshaken(t, s)
			_, _ = nc.Write(b)
			closedByServer(t, nc)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, s *Server)
		want string
	}{
		{"garbage handshake", func(t *testing.T, s *Server) {
			nc, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_, _ = nc.Write(bytes.Repeat([]byte("GET / HTTP/1.1\r\n"), 200))
			closedByServer(t, nc)
		}, ErrorHandshake},
		{"zero chunk size", raw([]byte{0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0}), ErrorProtocol},
		{"message of 16 MB announced after publishing", func(t *testing.T, s *Server) {
			nc, _ := publishing(t, s)
			_, _ = nc.Write([]byte{0x08, 0, 0, 0, 0xff, 0xff, 0xff, 9, 1, 0, 0, 0})
			closedByServer(t, nc)
		}, ErrorProtocol},
		{"amf nonsense", raw([]byte{0x03, 0, 0, 0, 0, 0, 3, 20, 0, 0, 0, 0, 0x02, 0xff, 0xff}), ErrorProtocol},
		{"flv tag with a lying nal length", func(t *testing.T, s *Server) {
			nc, c := publishing(t, s)
			cfg := wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindConfig,
				Data: wire.MarshalAVCConfig([]byte{0x67, 0x42, 0, 0x1e}, []byte{0x68, 0xce})}.Marshal()
			_ = c.WriteMessage(6, &wire.Message{Type: wire.TypeVideo, StreamID: 1, Payload: cfg})
			lie := wire.VideoTag{Codec: wire.VideoH264, Key: true, Kind: wire.KindFrames, Data: []byte{0x7f, 0xff, 0xff, 0xff, 0x65}}.Marshal()
			_ = c.WriteMessage(6, &wire.Message{Type: wire.TypeVideo, StreamID: 1, Payload: lie})
			closedByServer(t, nc)
		}, ErrorMedia},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, errs := startServer(t, zap.NewNop())
			runPush(t, s, ingest.Camera{ID: "cam"}, &collector{})
			tc.run(t, s)
			testenv.WaitFor(t, 5*time.Second, "error counted", func() bool { return len(errs.list()) > 0 })
			if got := errs.list(); got[0] != tc.want {
				t.Errorf("errors %v, want %s", got, tc.want)
			}
		})
	}
}
