package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/testenv"
)

// quickstartBase is the node address docs/quickstart.md is written for;
// the test puts its own node's address in its place.
const quickstartBase = "http://127.0.0.1:8080"

// shBlock matches a fenced block of docs/quickstart.md marked sh.
var shBlock = regexp.MustCompile("(?ms)^```sh\n(.*?)^```")

// TestQuickstart runs every sh block of docs/quickstart.md, in order, in
// one bash shell, against a fresh `vigia serve` started with the RUN_ARGS
// of the Makefile (as `make run` starts it, on ports free now), with the
// node's data_dir as ./data of the shell's directory: the walkthrough from
// client to downloadable video works as written. The files it downloads
// (a segment, a thumbnail, the video) are checked too.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "quickstart.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 8 {
		t.Fatalf("%d sh blocks in docs/quickstart.md, want the whole walkthrough", len(blocks))
	}
	runArgs := makefileRunArgs(t)

	bin := buildVigia(t)
	dir := t.TempDir()
	port := testenv.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	args := append([]string{"serve"}, runArgs...)
	args = append(args, "--data_dir", filepath.Join(dir, "data"), "--http.addr", fmt.Sprintf("127.0.0.1:%d", port),
		"--nats.listen", "127.0.0.1:0", "--rtmp.addr", "127.0.0.1:0")
	node := exec.Command(bin, args...)
	nodeOut := &lockedBuffer{}
	node.Stdout, node.Stderr = nodeOut, nodeOut
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = node.Process.Kill()
		_, _ = node.Process.Wait()
		if t.Failed() {
			t.Logf("serve output:\n%s", nodeOut.String())
		}
	})
	testenv.WaitFor(t, 60*time.Second, "/readyz 200", func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if !strings.Contains(nodeOut.String(), "ingest.allow_private_networks=false") {
		t.Errorf("make run's node does not say that cameras on this machine are allowed, and how to turn it off")
	}

	var script strings.Builder
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '### block %d'\n%s\n", i+1, strings.ReplaceAll(string(b[1]), quickstartBase, base))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script.String())
	sh.Dir = dir
	var out bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &out
	start := time.Now()
	if err := sh.Run(); err != nil {
		t.Fatalf("the quickstart's commands failed after %v: %v\n%s", time.Since(start).Round(time.Second), err, out.String())
	}
	t.Logf("the quickstart's %d blocks ran in %v", len(blocks), time.Since(start).Round(time.Second))

	for _, f := range []struct {
		name  string
		magic []byte
		at    int
	}{{"segment.mp4", []byte("ftyp"), 4}, {"video.mp4", []byte("ftyp"), 4}, {"thumb.jpg", []byte{0xff, 0xd8}, 0}} {
		data, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Errorf("%s: %v\n%s", f.name, err, out.String())
			continue
		}
		if len(data) < f.at+len(f.magic) || !bytes.Equal(data[f.at:f.at+len(f.magic)], f.magic) {
			t.Errorf("%s (%d bytes) is not what it should be", f.name, len(data))
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("quickstart output:\n%s", out.String())
	}
}

// makefileRunArgs returns the words of the Makefile's RUN_ARGS default.
func makefileRunArgs(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RUN_ARGS\s*\?=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no RUN_ARGS in the Makefile")
	}
	return strings.Fields(string(m[1]))
}
