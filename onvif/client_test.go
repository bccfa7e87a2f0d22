package onvif

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
