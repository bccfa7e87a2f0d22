package rtsp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
)

// sourceCamera is an RTSP camera on 127.0.0.2 whose SETUP answer over UDP
// names source=127.0.0.1 and server ports serverPort-serverPort+1.
func sourceCamera(t *testing.T, serverPort int) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	sdp := "v=0\r\no=- 0 0 IN IP4 127.0.0.2\r\ns=cam\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n" +
		"m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n" +
		"a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z0IAKeKQFAe2AtwEBAaQeJEV,aM48gA==\r\na=control:trackID=0\r\n"
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					var req base.Request
					if err := req.Unmarshal(br); err != nil {
						return
					}
					res := base.Response{StatusCode: base.StatusOK, Header: base.Header{"CSeq": req.Header["CSeq"]}}
					switch req.Method {
					case base.Options:
						res.Header["Public"] = base.HeaderValue{"DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER"}
					case base.Describe:
						res.Header["Content-Type"] = base.HeaderValue{"application/sdp"}
						res.Header["Content-Base"] = base.HeaderValue{req.URL.String() + "/"}
						res.Body = []byte(sdp)
					case base.Setup:
						tr := strings.Join(req.Header["Transport"], "")
						res.Header["Transport"] = base.HeaderValue{fmt.Sprintf("%s;server_port=%d-%d;source=127.0.0.1", tr, serverPort, serverPort+1)}
						res.Header["Session"] = base.HeaderValue{"12345678;timeout=60"}
					default:
						res.Header["Session"] = base.HeaderValue{"12345678"}
					}
					b, _ := res.Marshal()
					if _, err := nc.Write(b); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln
}

// TestUDPSourceGuarded: a camera reached over RTSP with UDP transport
// whose SETUP answer names source=127.0.0.1 gets the node's UDP packets
// at its own address (127.0.0.2, which the dial guard let through); none
// goes to 127.0.0.1, which the guard refuses.
func TestUDPSourceGuarded(t *testing.T) {
	refused, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	port := refused.LocalAddr().(*net.UDPAddr).Port
	own, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.2:%d", port))
	if err != nil {
		t.Skipf("port %d on 127.0.0.2: %v", port, err)
	}
	defer own.Close()
	ln := sourceCamera(t, port)

	s := New(ingest.Camera{ID: "c", URL: "rtsp://" + ln.Addr().String() + "/cam", Transport: "udp"},
		ingest.SourceConfig{ReadTimeout: 5 * time.Second}, nil)
	s.allowed = onlyHost(ln.Addr().String())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &unitSink{}) }()
	defer func() { cancel(); <-done }()

	buf := make([]byte, 1500)
	_ = own.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, _, err := own.ReadFrom(buf); err != nil {
		t.Fatalf("no UDP packet at the camera's address: %v", err)
	}
	// The firewall-opening packets of every path leave together.
	_ = refused.SetReadDeadline(time.Now().Add(time.Second))
	if n, from, err := refused.ReadFrom(buf); err == nil {
		t.Errorf("%d bytes from %s sent to 127.0.0.1, the camera's source=", n, from)
	}
}

// TestStripSource checks the Transport header rewrite.
func TestStripSource(t *testing.T) {
	allowed := func(ip netip.Addr) bool { return ip == netip.MustParseAddr("198.51.100.7") }
	for _, tc := range []struct{ in, want string }{
		{"RTP/AVP;unicast;client_port=5000-5001;server_port=6000-6001;source=127.0.0.1", "RTP/AVP;unicast;client_port=5000-5001;server_port=6000-6001"},
		{"RTP/AVP;unicast;source=198.51.100.7;server_port=6000-6001", "RTP/AVP;unicast;source=198.51.100.7;server_port=6000-6001"},
		{"RTP/AVP;unicast;Source=10.0.0.1;ssrc=1", "RTP/AVP;unicast;ssrc=1"},
		{`RTP/AVP;unicast;source="127.0.0.1"`, "RTP/AVP;unicast"},
		{"RTP/AVP;unicast;source=cam.example", "RTP/AVP;unicast"},
		{"RTP/AVP;unicast;source=::ffff:127.0.0.1", "RTP/AVP;unicast"},
		{"RTP/AVP/TCP;interleaved=0-1", "RTP/AVP/TCP;interleaved=0-1"},
	} {
		if got := stripSource(tc.in, allowed, zap.NewNop()); got != tc.want {
			t.Errorf("stripSource(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
