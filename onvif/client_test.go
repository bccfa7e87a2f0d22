package onvif

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestResponseBounds(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/large":
			w.Write([]byte(`<Envelope><Body><R>`))
			w.Write([]byte(strings.Repeat("x", MaxResponseBytes)))
			w.Write([]byte(`</R></Body></Envelope>`))
		case "/slow":
			select {
			case <-block:
			case <-r.Context().Done():
			}
		case "/html":
			w.Write([]byte("<html><body>login</body></html>"))
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx := context.Background()
	c := NewClient(srv.URL+"/large", "", "")
	if _, err := c.GetDeviceInformation(ctx); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("large: %v, want ErrResponseTooLarge", err)
	}
	c = NewClient(srv.URL+"/slow", "", "")
	c.Timeout = 100 * time.Millisecond
	start := time.Now()
	if _, err := c.GetDeviceInformation(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("slow: returned after %v", d)
	}
	c = NewClient(srv.URL+"/html", "", "")
	if _, err := c.GetDeviceInformation(ctx); !errors.Is(err, ErrMalformed) {
		t.Fatalf("html: %v, want ErrMalformed", err)
	}
}

func TestRewrite(t *testing.T) {
	c := NewClient("http://203.0.113.5:8080/onvif/device_service", "", "")
	for in, want := range map[string]string{
		"http://192.168.1.64/onvif/Media":       "http://203.0.113.5:8080/onvif/Media",
		"http://192.168.1.64:80/onvif/Events":   "http://203.0.113.5:8080/onvif/Events",
		"":                                      "http://203.0.113.5:8080/onvif/device_service",
		"not a url %%":                          "http://203.0.113.5:8080/onvif/device_service",
		"http://[fe80::1]/onvif/event?Idx=0_17": "http://203.0.113.5:8080/onvif/event?Idx=0_17",
	} {
		if got := c.rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSyncKeepsOffset: a second Sync whose measurement is within the
// clock's resolution of the first keeps the first offset; a camera clock
// that moved further gives the new one.
func TestSyncKeepsOffset(t *testing.T) {
	cam := time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><GetSystemDateAndTimeResponse><SystemDateAndTime><UTCDateTime>` +
			`<Date><Year>2026</Year><Month>3</Month><Day>1</Day></Date><Time><Hour>12</Hour><Minute>0</Minute><Second>` +
			strconv.Itoa(cam.Second()) + `</Second></Time></UTCDateTime></SystemDateAndTime></GetSystemDateAndTimeResponse></s:Body></s:Envelope>`))
	}))
	defer srv.Close()
	local := time.Date(2026, 3, 1, 12, 0, 0, 300*int(time.Millisecond), time.UTC)
	c := NewClient(srv.URL, "", "")
	c.Now = func() time.Time { return local }
	ctx := context.Background()
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.ClockOffset(); got != 9*time.Second {
		t.Fatalf("offset %v, want 9s", got)
	}
	// 0.8 s later the camera still says :10 (its clock gives whole
	// seconds): 8.9 s measured, within resolution, 9 s kept.
	local = local.Add(800 * time.Millisecond)
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.ClockOffset(); got != 9*time.Second {
		t.Fatalf("offset %v after a measurement within resolution, want 9s kept", got)
	}
	// The camera's clock was set 5 s ahead.
	cam = cam.Add(5 * time.Second)
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.ClockOffset(); got != 13*time.Second {
		t.Fatalf("offset %v after the camera's clock moved, want 13s", got)
	}
}
