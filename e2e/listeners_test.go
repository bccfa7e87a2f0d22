package e2e

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTakenPortIsOneLine: `vigia serve` with the port of one of its
// listeners (HTTP, embedded NATS, RTMP, WebRTC UDP and TCP) held by
// another socket exits with one line naming the key, the value and where
// to set it, well within the time a start takes, and never logs a stack
// trace.
func TestTakenPortIsOneLine(t *testing.T) {
	t.Parallel()
	bin := buildVigia(t)
	for _, tc := range []struct {
		key, flag, env string
		udp            bool
	}{
		{key: "http.addr", flag: "--http.addr", env: "VIGIA_HTTP_ADDR"},
		{key: "nats.listen", flag: "--nats.listen", env: "VIGIA_NATS_LISTEN"},
		{key: "rtmp.addr", flag: "--rtmp.addr", env: "VIGIA_RTMP_ADDR"},
		{key: "webrtc.udp_mux", flag: "--webrtc.udp_mux", env: "VIGIA_WEBRTC_UDP_MUX", udp: true},
		{key: "webrtc.tcp_mux", flag: "--webrtc.tcp_mux", env: "VIGIA_WEBRTC_TCP_MUX"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			var held string
			if tc.udp {
				c, err := net.ListenPacket("udp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				held = c.LocalAddr().String()
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				held = ln.Addr().String()
			}
			args := map[string]string{"--http.addr": "127.0.0.1:0", "--nats.listen": "127.0.0.1:0", "--rtmp.addr": "127.0.0.1:0"}
			args[tc.flag] = held
			argv := []string{"serve", "--data_dir", filepath.Join(t.TempDir(), "data"), "--synth.cameras", "0"}
			for k, v := range args {
				argv = append(argv, k, v)
			}
			start := time.Now()
			out, err := exec.Command(bin, argv...).CombinedOutput()
			took := time.Since(start)
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("exit %v, want a failure; output:\n%s", err, out)
			}
			want := fmt.Sprintf("vigia serve: %s %s: address already in use (set %s or %s)", tc.key, held, tc.env, tc.flag)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if last := lines[len(lines)-1]; last != want {
				t.Errorf("last line %q, want %q; output:\n%s", last, want, out)
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "goroutine ") {
					t.Fatalf("a stack trace in the output:\n%s", out)
				}
			}
			// The start itself, not a wait for the port, is what takes time:
			// the embedded NATS server used to retry for 10 s.
			if took > 5*time.Second {
				t.Errorf("exited after %v, want a prompt failure", took)
			}
			t.Logf("%s held: exit after %v: %s", tc.key, took.Round(time.Millisecond), lines[len(lines)-1])
		})
	}
}
