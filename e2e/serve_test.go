package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/testenv"
)

// TestServe runs `vigia serve` as `make run` does: /readyz says which storage
// and NATS it uses, synthetic cameras are recorded to the data dir, the
// recordings page lists them, and SIGTERM stops it cleanly.
func TestServe(t *testing.T) {
	t.Parallel()
	bin := buildVigia(t)
	dir := t.TempDir()
	port := testenv.FreePort(t)
	cmd := exec.Command(bin, "serve", "--data_dir", filepath.Join(dir, "data"), "--http.addr", fmt.Sprintf("127.0.0.1:%d", port),
		"--nats.listen", "127.0.0.1:0", "--rtmp.addr", "127.0.0.1:0", "--synth.cameras", "2", "--recording.segment_duration", "2s")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("serve output:\n%s", out.String())
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var ready struct {
		Ready   bool   `json:"ready"`
		Storage string `json:"storage"`
		NATS    string `json:"nats"`
	}
	testenv.WaitFor(t, 30*time.Second, "/readyz 200", func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		return res.StatusCode == 200 && json.NewDecoder(res.Body).Decode(&ready) == nil
	})
	if !ready.Ready || !strings.HasPrefix(ready.Storage, "fs:") || !strings.Contains(ready.NATS, "embedded nats") {
		t.Errorf("/readyz: %+v", ready)
	}
	// The URL line is printed once everything has started.
	testenv.WaitFor(t, 30*time.Second, "serve printing its URL", func() bool { return strings.Contains(out.String(), base+"/") })
	testenv.WaitFor(t, 60*time.Second, "recordings of synth-1 listed", func() bool {
		res, err := http.Get(base + "/recordings/synth-1")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var recs []struct {
			URL string `json:"url"`
		}
		if json.NewDecoder(res.Body).Decode(&recs) != nil || len(recs) == 0 {
			return false
		}
		// The signed URL serves the segment; without the signature it is refused.
		seg, err := http.Get(recs[0].URL)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(seg.Body)
		seg.Body.Close()
		if seg.StatusCode != 200 || len(body) == 0 {
			t.Errorf("signed URL: %d", seg.StatusCode)
		}
		unsigned, err := http.Get(strings.Split(recs[0].URL, "?")[0])
		if err == nil {
			unsigned.Body.Close()
			if unsigned.StatusCode != http.StatusForbidden {
				t.Errorf("unsigned URL: %d, want 403", unsigned.StatusCode)
			}
		}
		return true
	})
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "synth-1") || !strings.Contains(string(page), "<video") {
		t.Errorf("recordings page lacks the cameras or the player")
	}
	metrics, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(metrics.Body)
	metrics.Body.Close()
	for _, name := range []string{"vigia_cameras", "vigia_received_frames_total", "vigia_segments_stored_total", "vigia_spool_bytes", "vigia_segment_upload_latency_seconds_bucket"} {
		if !strings.Contains(string(mb), name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not exit within 40 s of SIGTERM")
	}
	// Nothing left in the spool: open segments were finished and uploaded.
	left, _ := filepath.Glob(filepath.Join(dir, "data", "spool", "*", "*"))
	if len(left) != 0 {
		t.Errorf("spool not empty after shutdown: %v", left)
	}
}

// TestBadConfigExits: a bad configuration exits non-zero with one line
// naming the problem.
func TestBadConfigExits(t *testing.T) {
	t.Parallel()
	bin := buildVigia(t)
	dir := t.TempDir()
	closed := testenv.FreePort(t)
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key", "storage: {bucketz: x}\n", `unknown key "storage.bucketz"`},
		{"bad duration", "recording: {segment_duration: 6x}\n", "recording.segment_duration"},
		{"no secret", fmt.Sprintf("data_dir: %s\nhttp: {addr: \"127.0.0.1:0\"}\nnats: {listen: \"127.0.0.1:0\"}\n", filepath.Join(dir, "n")), "security.secret is required"},
		{"unreachable s3", fmt.Sprintf("data_dir: %s\nhttp: {addr: \"127.0.0.1:0\"}\nnats: {listen: \"127.0.0.1:0\"}\nsecurity: {secret: %q}\nstorage: {backend: s3, endpoint: \"127.0.0.1:%d\", bucket: b, access_key: k, secret_key: s}\n", filepath.Join(dir, "d"), clusterSecret, closed), "storage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			if err := os.WriteFile(f, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "recorder", "--config", f).CombinedOutput()
			if err == nil {
				t.Fatalf("exit 0, want non-zero; output: %s", out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, tc.want) {
				t.Errorf("last line %q does not name %q", last, tc.want)
			}
			if tc.name != "unreachable s3" && len(lines) != 1 {
				t.Errorf("%d lines, want one: %s", len(lines), out)
			}
		})
	}
}
