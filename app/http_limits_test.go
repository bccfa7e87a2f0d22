//go:build cgo

package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/testenv"
)

// dialFrom connects to a's HTTP address from the loopback address src
// (each 127.x.y.z is another source address).
func dialFrom(t *testing.T, a *App, src string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", a.listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// closedByServer waits (up to 20 s) for the server to close nc: a read
// sees EOF or a reset, after any response.
func closedByServer(t *testing.T, nc net.Conn) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, nc)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("connection not closed by the server: %v", err)
	}
}

// getFrom sends GET path on nc and returns the status code.
func getFrom(t *testing.T, nc net.Conn, path string) int {
	t.Helper()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: vigia\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// rejected returns vigia_rejected_connections_total of the HTTP listener
// for reason, read from 127.0.0.9; "unreachable" while the node refuses
// that connection too (at its total cap).
func rejected(t *testing.T, a *App, reason string) string {
	t.Helper()
	nc := dialFrom(t, a, "127.0.0.9")
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(nc, "GET /metrics?token=%s HTTP/1.1\r\nHost: vigia\r\nConnection: close\r\n\r\n", testOperator)
	res, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		return "unreachable"
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	prefix := fmt.Sprintf(`vigia_rejected_connections_total{listener="http",reason=%q} `, reason)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	return "absent"
}

// TestHTTPSlowHeaders: a client sending its request headers one byte at a
// time is disconnected after http.read_header_timeout, however long it
// goes on.
func TestHTTPSlowHeaders(t *testing.T) {
	t.Parallel()
	a := apiApp(t, Mode{Name: "test"}, func(c *config.Config) { c.HTTP.ReadHeaderTimeout = config.Duration(time.Second) })
	nc := dialFrom(t, a, "127.0.0.1")
	req := "GET /healthz HTTP/1.1\r\nHost: vigia\r\nX-Pad: " + strings.Repeat("a", 4000) + "\r\n\r\n"
	go func() { // 200 s of headers at this pace
		for i := range len(req) {
			if _, err := nc.Write([]byte{req[i]}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	closedByServer(t, nc)
}

// TestHTTPSlowBody: a body that does not arrive within http.read_timeout
// is answered 408 by the API, and on a route that does not read it the
// connection is closed all the same.
func TestHTTPSlowBody(t *testing.T) {
	t.Parallel()
	a := apiApp(t, Mode{Name: "api", API: true}, func(c *config.Config) { c.HTTP.ReadTimeout = config.Duration(time.Second) })
	for _, path := range []string{"/api/v1/auth/token", "/healthz"} {
		t.Run(path, func(t *testing.T) {
			nc := dialFrom(t, a, "127.0.0.1")
			fmt.Fprintf(nc, "POST %s HTTP/1.1\r\nHost: vigia\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", path)
			go func() { // 5000 s of body at this pace
				for {
					if _, err := nc.Write([]byte{' '}); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(nc), nil)
			if err != nil {
				t.Fatalf("no response: %v", err)
			}
			res.Body.Close()
			want := http.StatusRequestTimeout
			if path == "/healthz" {
				want = http.StatusMethodNotAllowed // answered at once, body left unread
			}
			if res.StatusCode != want {
				t.Errorf("status %d, want %d", res.StatusCode, want)
			}
			closedByServer(t, nc)
		})
	}
}

// TestHTTPConnectionsPerAddress: past http.max_connections_per_address an
// address's new connections are closed at once and counted; other
// addresses are served; a closed connection frees its place.
func TestHTTPConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	a := apiApp(t, Mode{Name: "test"}, func(c *config.Config) { c.HTTP.MaxConnectionsPerAddress = 3 })
	held := []net.Conn{dialFrom(t, a, "127.0.0.1"), dialFrom(t, a, "127.0.0.1"), dialFrom(t, a, "127.0.0.1")}
	closedByServer(t, dialFrom(t, a, "127.0.0.1"))
	if got := rejected(t, a, "per_address_limit"); got != "1" {
		t.Errorf("per_address_limit rejections %s, want 1", got)
	}
	if code := getFrom(t, dialFrom(t, a, "127.0.0.2"), "/healthz"); code != 200 {
		t.Errorf("another address: %d", code)
	}
	if code := getFrom(t, held[0], "/healthz"); code != 200 {
		t.Errorf("a held connection: %d", code)
	}
	held[1].Close()
	testenv.WaitFor(t, 10*time.Second, "a place freed for 127.0.0.1", func() bool {
		nc := dialFrom(t, a, "127.0.0.1")
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(nc, "GET /healthz HTTP/1.1\r\nHost: vigia\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(nc), nil)
		return err == nil && res.StatusCode == 200
	})
}

// TestHTTPMaxConnections: past http.max_connections every new connection
// is closed at once and counted.
func TestHTTPMaxConnections(t *testing.T) {
	t.Parallel()
	a := apiApp(t, Mode{Name: "test"}, func(c *config.Config) {
		c.HTTP.MaxConnections = 2
		c.HTTP.MaxConnectionsPerAddress = 0
	})
	first := dialFrom(t, a, "127.0.0.1")
	dialFrom(t, a, "127.0.0.2")
	closedByServer(t, dialFrom(t, a, "127.0.0.3"))
	first.Close()
	// The scrape itself may be refused (and counted) until the server has
	// seen first close.
	testenv.WaitFor(t, 10*time.Second, "the rejection counted", func() bool {
		n, err := strconv.Atoi(rejected(t, a, "max_connections"))
		return err == nil && n >= 1
	})
}

// TestHTTPIdleTimeout: a kept-alive connection waiting for its next
// request is closed after http.idle_timeout.
func TestHTTPIdleTimeout(t *testing.T) {
	t.Parallel()
	a := apiApp(t, Mode{Name: "test"}, func(c *config.Config) { c.HTTP.IdleTimeout = config.Duration(time.Second) })
	nc := dialFrom(t, a, "127.0.0.1")
	if code := getFrom(t, nc, "/healthz"); code != 200 {
		t.Fatalf("GET /healthz: %d", code)
	}
	closedByServer(t, nc)
}

// TestHTTPLargeHeaders: request headers over 64 KiB are refused with 431
// (net/http's own limit is 1 MiB).
func TestHTTPLargeHeaders(t *testing.T) {
	t.Parallel()
	a := apiApp(t, Mode{Name: "test"}, nil)
	for _, tc := range []struct {
		pad  int
		want int
	}{{32 << 10, http.StatusOK}, {100 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		nc := dialFrom(t, a, "127.0.0.1")
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(nc, "GET /healthz HTTP/1.1\r\nHost: vigia\r\nX-Pad: %s\r\n\r\n", strings.Repeat("a", tc.pad))
		res, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatalf("%d bytes of headers: %v", tc.pad, err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%d bytes of headers: %d, want %d", tc.pad, res.StatusCode, tc.want)
		}
	}
}
