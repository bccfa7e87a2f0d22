package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/testenv"
)

// The peers of the interop tests, RTSP servers and packetizers no one here
// wrote: MediaMTX (when its binary is there), GStreamer's gst-rtsp-server,
// and FFmpeg publishing into them or into a relay.

// Certificates for RTSPS (e2e/testdata/tls): server.pem is issued for
// 127.0.0.1 by the test CA in roots/, which the test process trusts the
// way an operator trusts a camera's CA, through SSL_CERT_DIR (read by Go
// when it first verifies a certificate); selfsigned.pem is trusted by no
// one.
var (
	tlsCert, tlsKey             = mustAbs("testdata/tls/server.pem"), mustAbs("testdata/tls/server.key")
	untrustedCert, untrustedKey = mustAbs("testdata/tls/selfsigned.pem"), mustAbs("testdata/tls/selfsigned.key")
)

func init() {
	dirs := mustAbs("testdata/tls/roots")
	if d := os.Getenv("SSL_CERT_DIR"); d != "" {
		dirs += ":" + d
	} else {
		dirs += ":/etc/ssl/certs"
	}
	_ = os.Setenv("SSL_CERT_DIR", dirs)
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}

// mediamtxPath returns the MediaMTX binary, or skips the test saying why
// it cannot run.
func mediamtxPath(t *testing.T) string {
	t.Helper()
	p, err := testenv.FindMediaMTX()
	if err != nil {
		t.Skipf("MediaMTX cells did not run: %v", err)
	}
	return p
}

// mediaMTX is a running MediaMTX that serves what is published to it
// (RTSP or RTMP) and records nothing.
type mediaMTX struct {
	rtsp, rtsps, rtmp string // base URLs; rtsps empty without TLS
	log               *lockedBuffer
}

// mediaMTXOptions are the settings of a MediaMTX beyond serving.
type mediaMTXOptions struct {
	// AuthMethods, when set ("basic", "digest"), protects reading the
	// paths under a/ with viewerUser and viewerPass; the paths under o/,
	// and publishing, stay open.
	AuthMethods []string
	// TLS serves RTSPS (and SRTP) beside RTSP, with the test CA's
	// certificate.
	TLS bool
}

// Credentials of the protected paths of the interop peers.
const (
	viewerUser = "viewer"
	viewerPass = "s3cr3t@p!ss" // a character a URL must escape
)

// startMediaMTX runs MediaMTX on loopback ports chosen now, serving
// anyone; it stops at the end of the test. Without a binary the test is
// skipped.
func startMediaMTX(t *testing.T) *mediaMTX {
	t.Helper()
	return startMediaMTXWith(t, mediamtxPath(t), mediaMTXOptions{})
}

// startMediaMTXWith runs the MediaMTX binary bin with opts. Ports chosen
// free can be taken by another process before MediaMTX binds them: it is
// started again on other ports when it exits for that reason.
func startMediaMTXWith(t *testing.T, bin string, opts mediaMTXOptions) *mediaMTX {
	t.Helper()
	for attempt := 1; ; attempt++ {
		m, err := tryMediaMTX(t, bin, opts)
		if err == nil {
			return m
		}
		if attempt == 3 || !strings.Contains(m.log.String(), "address already in use") {
			t.Fatalf("mediamtx: %v\n%s", err, m.log.String())
		}
		t.Logf("mediamtx attempt %d: a port was taken, trying other ports", attempt)
	}
}

// tryMediaMTX starts MediaMTX on ports chosen now and waits until it
// listens, or reports why it did not.
func tryMediaMTX(t *testing.T, bin string, opts mediaMTXOptions) (*mediaMTX, error) {
	t.Helper()
	dir := t.TempDir()
	rtspPort, rtmpPort := testenv.FreePort(t), testenv.FreePort(t)
	rtpPort := testenv.FreePortPair(t)
	conf := fmt.Sprintf(`logLevel: info
api: no
metrics: no
pprof: no
playback: no
hls: no
webrtc: no
srt: no
moq: no
rtmp: yes
rtmpAddress: 127.0.0.1:%d
rtspAddress: 127.0.0.1:%d
rtpAddress: 127.0.0.1:%d
rtcpAddress: 127.0.0.1:%d
`, rtmpPort, rtspPort, rtpPort, rtpPort+1)
	m := &mediaMTX{rtsp: fmt.Sprintf("rtsp://127.0.0.1:%d", rtspPort), rtmp: fmt.Sprintf("rtmp://127.0.0.1:%d", rtmpPort), log: &lockedBuffer{}}
	if opts.TLS {
		rtspsPort, srtpPort := testenv.FreePort(t), testenv.FreePortPair(t)
		conf += fmt.Sprintf(`rtspEncryption: optional
rtspsAddress: 127.0.0.1:%d
srtpAddress: 127.0.0.1:%d
srtcpAddress: 127.0.0.1:%d
rtspServerKey: %s
rtspServerCert: %s
`, rtspsPort, srtpPort, srtpPort+1, tlsKey, tlsCert)
		m.rtsps = fmt.Sprintf("rtsps://127.0.0.1:%d", rtspsPort)
	}
	if len(opts.AuthMethods) > 0 {
		conf += fmt.Sprintf(`rtspAuthMethods: [%s]
authInternalUsers:
  - user: any
    permissions:
      - action: publish
      - action: read
        path: "~^o/"
  - user: %s
    pass: %q
    permissions:
      - action: read
`, strings.Join(opts.AuthMethods, ", "), viewerUser, viewerPass)
	}
	conf += "pathDefaults:\n  record: no\npaths:\n  all_others:\n"
	confPath := filepath.Join(dir, "mediamtx.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, confPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = m.log, m.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { // ends when the process does
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			out := m.log.String()
			if len(out) > 10000 {
				out = out[len(out)-10000:]
			}
			t.Logf("mediamtx log (tail):\n%s", out)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if listensOn(cmd.Process.Pid, rtspPort) {
			return m, nil
		}
		select {
		case <-exited:
			return m, errors.New("exited before listening")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return m, errors.New("not listening after 15 s")
		}
	}
}

// listensOn reports whether process pid holds the TCP socket listening on
// 127.0.0.1:port (another process may hold the port).
func listensOn(pid, port int) bool {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	local := fmt.Sprintf("0100007F:%04X", port)
	inode := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == local && f[3] == "0A" { // LISTEN
			inode = f[9]
		}
	}
	if inode == "" {
		return false
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == "socket:["+inode+"]" {
			return true
		}
	}
	return false
}

// gstPython is the Python that runs the GStreamer scripts of testdata:
// Debian's python3-gi belongs to Debian's interpreter, which may not be the
// first python3 on PATH.
func gstPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// startGstScript runs testdata/script with args (a GStreamer server) and
// returns its standard output and standard error. The script stops when its standard input
// closes, even if the test process dies without killing it; it is killed
// at the end of the test, and its standard error (GStreamer's warnings and
// errors) is logged if the test failed.
func startGstScript(t *testing.T, script string, args ...string) (io.Reader, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(gstPython(), append([]string{"testdata/" + script}, args...)...)
	cmd.Env = append(os.Environ(), "GST_DEBUG=2", "GST_DEBUG_NO_COLOR=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			out := stderr.String()
			if len(out) > 20000 {
				out = out[len(out)-20000:]
			}
			t.Logf("%s stderr (tail):\n%s", script, out)
		}
	})
	return stdout, stderr
}

// publishing reports whether MediaMTX has a publisher on path.
func (m *mediaMTX) publishing(path string) bool {
	return strings.Contains(m.log.String(), "is publishing to path '"+path+"'")
}

// publish has FFmpeg send clip to url in real time (its own pace, no
// encoding) until the clip ends or the test does.
func publish(t *testing.T, clip, url string, format ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"-hide_banner", "-loglevel", "error", "-re", "-i", clip, "-c", "copy"}, format...)
	cmd := exec.CommandContext(ctx, "ffmpeg", append(args, url)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if out.String() != "" {
			t.Logf("ffmpeg publishing %s: %s", url, out.String())
		}
	})
}

// gstServer is one server of gst_matrix_server.py.
type gstServer struct {
	Auth string `json:"auth,omitempty"` // "basic" or "digest"
	User string `json:"user,omitempty"`
	Pass string `json:"pass,omitempty"`
	Cert string `json:"cert,omitempty"` // with Key: RTSPS
	Key  string `json:"key,omitempty"`
}

// gstMount is a clip served by one of gst_matrix_server.py's servers.
type gstMount struct {
	Server   string `json:"server"`
	Path     string `json:"path"`
	File     string `json:"file"`
	Video    string `json:"video"` // h264 or h265
	Audio    bool   `json:"audio"`
	InBand   bool   `json:"inband"`
	AudioMTU int    `json:"audio_mtu,omitempty"`
	TCPOnly  bool   `json:"tcp_only,omitempty"`
}

// startGstMatrix runs testdata/gst_matrix_server.py with these servers and
// mounts and returns each server's port. It stops at the end of the test.
func startGstMatrix(t *testing.T, servers map[string]gstServer, mounts []gstMount) map[string]int {
	t.Helper()
	conf, err := json.Marshal(map[string]any{"servers": servers, "mounts": mounts})
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(t.TempDir(), "gst.json")
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := startGstScript(t, "gst_matrix_server.py", confPath)
	type report struct {
		ports map[string]int
		ok    bool
	}
	ready := make(chan report, 1)
	go func() {
		ports := map[string]int{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var name string
			var port int
			if _, err := fmt.Sscanf(sc.Text(), "port %s %d", &name, &port); err == nil {
				ports[name] = port
			}
			if sc.Text() == "ready" {
				ready <- report{ports, true}
				break
			}
		}
		if len(ready) == 0 {
			ready <- report{}
		}
		// Keep reading so the server never blocks on a full pipe.
		for sc.Scan() {
		}
	}()
	select {
	case r := <-ready:
		if !r.ok {
			t.Fatalf("gst_matrix_server.py exited before listening (run make deps for python3-gi and GStreamer):\n%s", stderr.String())
		}
		return r.ports
	case <-time.After(30 * time.Second):
		t.Fatalf("gst_matrix_server.py did not report its ports in 30 s:\n%s", stderr.String())
	}
	return nil
}

// loadTLS loads a certificate and key of testdata/tls.
func loadTLS(t *testing.T, cert, key string) *tls.Config {
	t.Helper()
	c, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{c}}
}
