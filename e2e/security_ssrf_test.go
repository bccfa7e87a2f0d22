package e2e

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// TestSSRFAtDialTime: with ingest.allow_private_networks off, cameras
// whose URL points at loopback (by address or by a name that resolves to
// it), the cloud metadata address, or private and shared ranges are refused
// when dialled: status ERRO PERMANENTE, "address not allowed", and no
// connection reaches the address. (Redirects are covered by
// ingest/rtsp.TestRedirects: they go through the same guard and never carry
// credentials to another host.)
func TestSSRFAtDialTime(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var reached atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c := s3Config(t, m)
	c.Motion.Enabled = false
	if c.Ingest.AllowPrivateNetworks {
		t.Fatal("allow_private_networks is on by default")
	}
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	cams := map[string]string{
		"loopback":  "rtsp://user:Ssrf-Pass-1@127.0.0.1:" + port + "/x",
		"loopback6": "rtsp://[::1]:" + port + "/x",
		"localhost": "rtsp://localhost:" + port + "/x",
		"metadata":  "rtsp://169.254.169.254/latest/meta-data",
		"ten":       "rtsp://10.1.2.3/x",
		"one72":     "rtsp://172.16.0.5:554/x",
		"one92":     "rtsp://192.168.1.10/x",
		"cgnat":     "rtsp://100.64.0.1/x",
		"ula":       "rtsp://[fd00::1]/x",
		"zero":      "rtsp://0.0.0.0:" + port + "/x",
		"mapped":    "rtsp://[::ffff:127.0.0.1]:" + port + "/x",
	}
	for id, url := range cams {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: url}); err != nil {
			t.Fatal(err)
		}
	}
	for id := range cams {
		testenv.WaitFor(t, 30*time.Second, id+" ERRO PERMANENTE", func() bool {
			s, _ := a.Recorder().Status(id)
			return s.Code == status.Permanent
		})
		s, _ := a.Recorder().Status(id)
		if !strings.Contains(s.LastError, ingest.ReasonForbidden) {
			t.Errorf("%s: last error %q, want %q", id, s.LastError, ingest.ReasonForbidden)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d connections reached the loopback listener", n)
	}
	if strings.Contains(logs.String(), "Ssrf-Pass-1") {
		t.Error("a camera password appears in the logs")
	}
}
