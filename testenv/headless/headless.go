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

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// DefaultChromium is the Debian chromium binary ("make deps" installs it).
const DefaultChromium = "/usr/bin/chromium"

// Browser is a tab of headless Chromium driven over the DevTools protocol.
// Its console messages and uncaught exceptions are collected and logged
// when the test fails.
type Browser struct {
	// Ctx is the chromedp context of the tab: pass it to chromedp.Run.
	Ctx context.Context

	mu   sync.Mutex
	logs []string
}

// shared is the headless Chromium of the test process: every Browser is a
// tab of its own, in a browser context of its own, in this one browser.
var shared struct {
	mu          sync.Mutex
	root        context.Context // the browser's first tab, kept open
	cancelRoot  context.CancelFunc
	cancelAlloc context.CancelFunc
	profile     string
}

// Chromium returns a tab of the test process's headless Chromium
// ($VIGIA_CHROMIUM, or /usr/bin/chromium), in a fresh browser context (no
// cookies, storage or cache shared with other tests), and closes it when t
// ends. The browser starts with the first test that asks, and again if it
// has exited. Autoplay is allowed without a user gesture; every tab is
// 1280×800. A missing binary fails the test with a hint. Close stops the
// browser: a package's TestMain calls it after the tests.
func Chromium(t testing.TB) *Browser {
	t.Helper()
	root, err := sharedBrowser()
	if err != nil {
		t.Fatal(err)
	}
	// A browser context of its own, in a window of its own: headless
	// Chromium opens no tab in a new context without one.
	chrome := chromedp.FromContext(root).Browser
	browser := cdp.WithExecutor(root, chrome)
	bcID, err := target.CreateBrowserContext().Do(browser)
	if err != nil {
		t.Fatalf("chromium browser context: %v", err)
	}
	tid, err := target.CreateTarget("about:blank").WithBrowserContextID(bcID).
		WithNewWindow(true).WithWidth(1280).WithHeight(800).Do(browser)
	if err != nil {
		_ = target.DisposeBrowserContext(bcID).Do(browser)
		t.Fatalf("chromium tab: %v", err)
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithTargetID(tid))
	cancelTab := func() {
		cancel() // closes the tab
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = target.DisposeBrowserContext(bcID).Do(cdp.WithExecutor(dctx, chrome))
	}
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
		t.Fatalf("chromium tab: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range b.Logs() {
				t.Logf("browser %s", l)
			}
		}
		cancelTab()
	})
	return b
}

// sharedBrowser returns the context of the shared browser's first tab,
// starting the browser when there is none or it has exited.
func sharedBrowser() (context.Context, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.root != nil && shared.root.Err() == nil {
		return shared.root, nil
	}
	closeLocked()
	exe := os.Getenv("VIGIA_CHROMIUM")
	if exe == "" {
		exe = DefaultChromium
	}
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("chromium not found at %s (set VIGIA_CHROMIUM or run make deps): %w", exe, err)
	}
	profile, err := os.MkdirTemp("", "vigia-chromium-")
	if err != nil {
		return nil, fmt.Errorf("chromium profile: %w", err)
	}
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
		// Tabs side by side all play and run their timers at full rate.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		// WebRTC peers on this machine are reached over loopback.
		chromedp.Flag("allow-loopback-in-peer-connection", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(actx)
	shared.root, shared.cancelRoot, shared.cancelAlloc, shared.profile = root, cancelRoot, cancelAlloc, profile
	if err := chromedp.Run(root); err != nil {
		closeLocked()
		return nil, fmt.Errorf("start chromium %s: %w", exe, err)
	}
	return root, nil
}

// Close stops the shared browser, if it was started, and removes its
// profile.
func Close() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	closeLocked()
}

func closeLocked() {
	if shared.cancelRoot != nil {
		shared.cancelRoot()
		shared.cancelAlloc()
	}
	if shared.profile != "" {
		// Retried while Chromium's last writes land.
		for range 20 {
			if os.RemoveAll(shared.profile) == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	shared.root, shared.cancelRoot, shared.cancelAlloc, shared.profile = nil, nil, nil, ""
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
