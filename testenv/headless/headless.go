// Package headless starts headless Chromium for tests and drives it over the
// DevTools protocol. It is apart from testenv so that the packages tested
// under the race detector do not compile chromedp.
package headless

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// DefaultChromium is the Debian chromium binary ("make deps" installs it).
const DefaultChromium = "/usr/bin/chromium"

// Browser is a headless Chromium driven over the DevTools protocol, with one
// tab. Its console messages and uncaught exceptions are collected and
// logged when the test fails.
type Browser struct {
	// Ctx is the chromedp context of the tab: pass it to chromedp.Run.
	Ctx context.Context

	mu   sync.Mutex
	logs []string
}

// Chromium starts headless Chromium ($VIGIA_CHROMIUM, or /usr/bin/chromium)
// with a fresh profile for t and closes it when t ends. Autoplay is allowed
// without a user gesture. A missing binary fails the test with a hint.
func Chromium(t testing.TB) *Browser {
	t.Helper()
	exe := os.Getenv("VIGIA_CHROMIUM")
	if exe == "" {
		exe = DefaultChromium
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("chromium not found at %s (set VIGIA_CHROMIUM or run make deps): %v", exe, err)
	}
	// The profile is removed after the browser is closed (cleanups run
	// last-registered first), retrying while Chromium's last writes land:
	// t.TempDir's own cleanup fails the test when a file appears meanwhile.
	profile, err := os.MkdirTemp("", "vigia-chromium-")
	if err != nil {
		t.Fatalf("chromium profile: %v", err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("chromium profile %s left behind", profile)
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		// WebRTC peers on this machine are reached over loopback.
		chromedp.Flag("allow-loopback-in-peer-connection", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &Browser{Ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			b.add(fmt.Sprintf("console.%s: %s", e.Type, strings.Join(parts, " ")))
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			b.add("exception: " + msg)
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range b.Logs() {
				t.Logf("browser %s", l)
			}
		}
		cancelTab()
		cancelAlloc()
	})
	return b
}

func (b *Browser) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.logs) < 2000 {
		b.logs = append(b.logs, line)
	}
}

// Logs returns the console messages and exceptions seen so far.
func (b *Browser) Logs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.logs...)
}
