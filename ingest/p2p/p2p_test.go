package p2p

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
)

func TestParseURL(t *testing.T) {
	cases := []struct {
		raw    string
		want   Target
		reason string
	}{
		{URL("SN1", "p@ss:/", "1"), Target{Serial: "SN1", Password: "p@ss:/", Stream: "1"}, ""},
		{"p2p://admin:x@SN2", Target{Serial: "SN2", User: "admin", Password: "x", Stream: "0"}, ""},
		{"p2p://:x@bad%20serial/0", Target{}, ingest.ReasonBadURL},
		{"p2p://:x@SN3/7", Target{}, ingest.ReasonNotFound},
		{"rtsp://h/x", Target{}, ingest.ReasonBadURL},
	}
	for _, tc := range cases {
		got, err := ParseURL(tc.raw)
		if tc.reason != "" {
			if pe, ok := ingest.IsPermanent(err); !ok || pe.Reason != tc.reason {
				t.Errorf("%s: %v, want %q", tc.raw, err, tc.reason)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestTemplate(t *testing.T) {
	r, err := NewResolver("rtsp://{user}:{password}@gw:8554/{serial}/{stream}?cam={camera}", "admin", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Resolve(context.Background(), "7", Target{Serial: "SN1", Password: "a/b@c", Stream: "1"})
	if want := "rtsp://admin:a%2Fb%40c@gw:8554/SN1/1?cam=7"; err != nil || got != want {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
	if _, err := NewResolver("", "admin", 0); !errors.Is(err, ErrNoResolver) {
		t.Errorf("empty resolver: %v", err)
	}
	if _, err := NewResolver("ftp://x", "admin", 0); err == nil {
		t.Errorf("ftp resolver accepted")
	}
}

func TestLookupAgainstGateway(t *testing.T) {
	g := synth.NewP2PGateway(synth.P2PGatewayConfig{Devices: []synth.P2PDevice{{Serial: "SN1", Password: "right"}}})
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	hs := httptest.NewServer(g.LookupHandler())
	defer hs.Close()
	r, err := NewResolver(hs.URL, "admin", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		t      Target
		reason string
	}{
		{Target{Serial: "SN1", Password: "right", Stream: "0"}, ""},
		{Target{Serial: "SN1", Password: "wrong", Stream: "0"}, ingest.ReasonAuth},
		{Target{Serial: "SN9", Password: "right", Stream: "0"}, ingest.ReasonNotFound},
	}
	for _, tc := range cases {
		u, err := r.Resolve(context.Background(), "cam", tc.t)
		if tc.reason == "" {
			if err != nil || !strings.HasPrefix(u, "rtsp://admin:right@") || !strings.HasSuffix(u, "/SN1/0") {
				t.Errorf("%+v: %q %v", tc.t, u, err)
			}
			continue
		}
		if pe, ok := ingest.IsPermanent(err); !ok || pe.Reason != tc.reason {
			t.Errorf("%+v: %v, want %q", tc.t, err, tc.reason)
		}
	}
}

func TestParseLookupResponse(t *testing.T) {
	cases := []struct {
		status int
		body   string
		ok     bool
	}{
		{200, `{"url":"rtsp://gw/SN1/0"}`, true},
		{200, `{"url":"file:///etc/passwd"}`, false},
		{200, `{"url":""}`, false},
		{200, `not json`, false},
		{500, `{"url":"rtsp://gw/x"}`, false},
	}
	for _, tc := range cases {
		_, err := ParseLookupResponse(tc.status, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%d %s: %v", tc.status, tc.body, err)
		}
		if err != nil && tc.status == 500 {
			if _, perm := ingest.IsPermanent(err); perm {
				t.Errorf("500 is permanent")
			}
		}
	}
}

func FuzzParseLookupResponse(f *testing.F) {
	f.Add(200, []byte(`{"url":"rtsp://admin:x@gw:8554/SN1/0"}`))
	f.Add(401, []byte(`{"error":"wrong password"}`))
	f.Add(404, []byte(`{}`))
	f.Add(200, []byte(`{"url":"rtmp://[::1`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		u, err := ParseLookupResponse(status, body)
		if err == nil && !strings.Contains(u, "://") {
			t.Fatalf("accepted %q", u)
		}
	})
}
