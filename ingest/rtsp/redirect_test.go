package rtsp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// rawRTSP is a minimal RTSP server on loopback: it answers every request
// with respond(request line, headers) and records what it received.
type rawRTSP struct {
	ln      net.Listener
	respond func(line string, h textproto.MIMEHeader) string

	mu    sync.Mutex
	conns int
	auth  []string
	lines []string
}

func newRawRTSP(t *testing.T, addr string, respond func(line string, h textproto.MIMEHeader) string) *rawRTSP {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &rawRTSP{ln: ln, respond: respond}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			go s.serve(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return s
}

func (s *rawRTSP) serve(c net.Conn) {
	defer c.Close()
	r := textproto.NewReader(bufio.NewReader(c))
	for {
		line, err := r.ReadLine()
		if err != nil {
			return
		}
		h, err := r.ReadMIMEHeader()
		if err != nil && len(h) == 0 {
			return
		}
		s.mu.Lock()
		s.lines = append(s.lines, line)
		if a := h.Get("Authorization"); a != "" {
			s.auth = append(s.auth, a)
		}
		s.mu.Unlock()
		res := s.respond(line, h)
		if _, err := fmt.Fprintf(c, "%sCSeq: %s\r\n\r\n", res, h.Get("CSeq")); err != nil {
			return
		}
	}
}

func (s *rawRTSP) addr() string { return s.ln.Addr().String() }

func (s *rawRTSP) seen() (conns int, auth []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, append([]string(nil), s.auth...)
}

// redirectTo answers DESCRIBE with 301 to location.
func redirectTo(location string) func(string, textproto.MIMEHeader) string {
	return func(line string, _ textproto.MIMEHeader) string {
		if strings.HasPrefix(line, "DESCRIBE ") {
			return "RTSP/1.0 301 Moved Permanently\r\nLocation: " + location + "\r\n"
		}
		return "RTSP/1.0 200 OK\r\nPublic: DESCRIBE, SETUP, PLAY, TEARDOWN\r\n"
	}
}

// challenge asks for credentials (basic) on every request without them.
func challenge(line string, h textproto.MIMEHeader) string {
	if h.Get("Authorization") == "" {
		return "RTSP/1.0 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"cam\"\r\n"
	}
	return "RTSP/1.0 404 Not Found\r\n"
}

type nopSink struct{}

func (nopSink) Tracks([]*media.Track) error { return nil }
func (nopSink) Unit(*media.Unit)            {}

func runOnce(t *testing.T, s *Source) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Run(ctx, nopSink{})
}

// onlyHost lets one loopback address through the dial guard and applies the
// real policy (no private networks) to every other address.
func onlyHost(addr string) func(netip.Addr) bool {
	allowed := netip.MustParseAddrPort(addr).Addr()
	return func(ip netip.Addr) bool { return ip == allowed || camera.AddressAllowed(ip, false) }
}

// TestRedirects: credentials are never sent to a redirected host, and a
// redirect is dialled through the address guard, so it cannot reach
// loopback, link-local or private addresses.
func TestRedirects(t *testing.T) {
	const pass = "Red1rect-S3cret"
	cases := []struct {
		name     string
		creds    bool
		target   func(t *testing.T) (location string, srv *rawRTSP)
		wantErr  error
		wantPerm bool
	}{
		{
			name:  "credentials to another port",
			creds: true,
			target: func(t *testing.T) (string, *rawRTSP) {
				b := newRawRTSP(t, "127.0.0.1:0", challenge)
				return "rtsp://" + b.addr() + "/stolen", b
			},
			wantErr: ErrRedirectHost, wantPerm: true,
		},
		{
			name:  "credentials to another name of the same host",
			creds: true,
			target: func(t *testing.T) (string, *rawRTSP) {
				b := newRawRTSP(t, "127.0.0.1:0", challenge)
				_, port, _ := net.SplitHostPort(b.addr())
				return "rtsp://localhost:" + port + "/stolen", b
			},
			wantErr: ErrRedirectHost, wantPerm: true,
		},
		{
			name: "no credentials, to another loopback address",
			target: func(t *testing.T) (string, *rawRTSP) {
				b := newRawRTSP(t, "127.0.0.2:0", challenge)
				return "rtsp://" + b.addr() + "/internal", b
			},
			wantPerm: true,
		},
		{
			name: "no credentials, to ::1",
			target: func(t *testing.T) (string, *rawRTSP) {
				b := newRawRTSP(t, "[::1]:0", challenge)
				return "rtsp://" + b.addr() + "/internal", b
			},
			wantPerm: true,
		},
		{
			name: "no credentials, to the metadata service",
			target: func(t *testing.T) (string, *rawRTSP) {
				return "rtsp://169.254.169.254:80/latest", nil
			},
			wantPerm: true,
		},
		{
			name: "no credentials, to a private network",
			target: func(t *testing.T) (string, *rawRTSP) {
				return "rtsp://10.0.0.1:554/x", nil
			},
			wantPerm: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loc, target := tc.target(t)
			a := newRawRTSP(t, "127.0.0.1:0", redirectTo(loc))
			url := "rtsp://" + a.addr() + "/cam"
			if tc.creds {
				url = "rtsp://admin:" + pass + "@" + a.addr() + "/cam"
			}
			s := New(ingest.Camera{ID: "c", URL: url}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, nil)
			s.allowed = onlyHost(a.addr())
			err := runOnce(t, s)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			pe, perm := ingest.IsPermanent(err)
			if perm != tc.wantPerm || (perm && pe.Reason != ingest.ReasonForbidden) {
				t.Errorf("error %v: permanent %v, want %v with %q", err, perm, tc.wantPerm, ingest.ReasonForbidden)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), pass) {
				t.Errorf("error text holds the password: %v", err)
			}
			if c, _ := a.seen(); c == 0 {
				t.Error("the camera itself was never reached")
			}
			if target != nil {
				if c, auth := target.seen(); c != 0 || len(auth) != 0 {
					t.Errorf("redirect target reached: %d connections, authorization %q", c, auth)
				}
			}
		})
	}
}

// TestRedirectSameHostFollowed: a redirect to another path of the same
// host:port is followed, with the credentials.
func TestRedirectSameHostFollowed(t *testing.T) {
	var a *rawRTSP
	a = newRawRTSP(t, "127.0.0.1:0", func(line string, h textproto.MIMEHeader) string {
		if strings.HasPrefix(line, "DESCRIBE ") && strings.Contains(line, "/old") {
			return "RTSP/1.0 301 Moved Permanently\r\nLocation: rtsp://" + a.addr() + "/new\r\n"
		}
		return challenge(line, h)
	})
	s := New(ingest.Camera{ID: "c", URL: "rtsp://admin:pw@" + a.addr() + "/old"}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, nil)
	s.allowed = onlyHost(a.addr())
	err := runOnce(t, s)
	// The new path answers 404 once authenticated: the redirect was followed.
	if pe, ok := ingest.IsPermanent(err); !ok || pe.Reason != ingest.ReasonNotFound {
		t.Fatalf("error %v, want %q after following the redirect", err, ingest.ReasonNotFound)
	}
	if _, auth := a.seen(); len(auth) == 0 {
		t.Error("credentials not sent to the camera's own host")
	}
}

// TestRedirectLoop: a camera redirecting to itself forever is given up.
func TestRedirectLoop(t *testing.T) {
	var a *rawRTSP
	a = newRawRTSP(t, "127.0.0.1:0", func(line string, h textproto.MIMEHeader) string {
		return redirectTo("rtsp://"+a.addr()+"/again")(line, h)
	})
	s := New(ingest.Camera{ID: "c", URL: "rtsp://" + a.addr() + "/cam"}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, nil)
	s.allowed = onlyHost(a.addr())
	if err := runOnce(t, s); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("error %v, want %v", err, ErrTooManyRedirects)
	}
	// The first connection and one per redirect followed.
	if c, _ := a.seen(); c != maxRedirects+1 {
		t.Errorf("%d connections, want %d", c, maxRedirects+1)
	}
}
