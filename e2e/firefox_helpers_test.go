package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigia/vigia/testenv"
)

// defaultFirefox is Debian's firefox-esr ("make deps" installs it).
const defaultFirefox = "/usr/bin/firefox-esr"

// firefoxCase is a page for testdata/firefox/play.js to open and watch.
type firefoxCase struct {
	Name      string `json:"name"`
	URL       string `json:"url"`
	Want      int    `json:"want,omitempty"`      // seconds the video must advance (3)
	TimeoutMs int    `json:"timeoutMs,omitempty"` // how long it may take (25000)
}

// firefoxResult is what play.js reports of a page.
type firefoxResult struct {
	Name         string  `json:"name"`
	OK           bool    `json:"ok"`
	Advanced     float64 `json:"advanced"`
	FirstFrameMs int     `json:"firstFrameMs"`
	Transport    string  `json:"transport"`
	Rendition    string  `json:"rendition"`
	Unplayable   string  `json:"unplayable"`
	WebRTCError  string  `json:"webrtcError"`
	WebRTCTries  int     `json:"webrtcSessions"`
	Ready        int     `json:"ready"`
	HEVC         struct {
		MSE bool `json:"mse"`
		RTC bool `json:"rtc"`
	} `json:"hevc"`
	RTCCodecs []string `json:"rtcCodecs"`
}

// firefoxPlay opens each case's page in turn in one headless firefox-esr
// ($VIGIA_FIREFOX, or /usr/bin/firefox-esr), driven over WebDriver BiDi by
// puppeteer-core (installed by make deps under the tools directory), and
// returns what it saw of each. A missing browser or package fails the test.
func firefoxPlay(t *testing.T, cases ...firefoxCase) []firefoxResult {
	t.Helper()
	exe := os.Getenv("VIGIA_FIREFOX")
	if exe == "" {
		exe = defaultFirefox
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("firefox-esr not found at %s (set VIGIA_FIREFOX or run make deps): %v", exe, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: run make deps")
	}
	modules := filepath.Join(testenv.ToolsDir(), "firefox", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "puppeteer-core", "package.json")); err != nil {
		t.Fatalf("puppeteer-core not found under %s: run make deps", modules)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "firefox", "play.js"))
	arg, _ := json.Marshal(cases)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(cases))*40*time.Second+60*time.Second)
	defer cancel()
	profile := t.TempDir()
	cmd := exec.CommandContext(ctx, node, script, exe, string(arg))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "TMPDIR="+profile, "MOZ_HEADLESS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var out []firefoxResult
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r firefoxResult
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Name != "" {
			out = append(out, r)
		}
	}
	if err != nil || len(out) != len(cases) {
		t.Fatalf("play.js in firefox-esr: %v (%d of %d pages reported):\n%s\n%s", err, len(out), len(cases), stdout.String(), stderr.String())
	}
	if testing.Verbose() {
		t.Logf("firefox-esr console:\n%s", stderr.String())
	}
	return out
}
