//go:build cgo

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
)

const testOperator = "app-test-operator-token-0123456789"

// testDocument is the CNPJ of the client the tests create; blockDocument
// is the same in digits.
const testDocument, blockDocument = "11.222.333/0001-81", "11222333000181"

// apiApp starts an App of mode over fs storage and an embedded NATS, every
// address a free loopback port; edit changes the configuration first.
func apiApp(t *testing.T, mode Mode, edit func(*config.Config)) *App {
	t.Helper()
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "app-test"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.OperatorToken = testOperator
	c.Ingest.AllowPrivateNetworks = true
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	if edit != nil {
		edit(c)
	}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	c.HTTP.PublicURL = ""
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := New(ctx, c, mode, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// call sends a JSON request to the app's API and decodes the answer; it
// fails unless the status is want.
func call(t *testing.T, a *App, method, path string, body any, want int) any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, data)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
	return v
}

// createClient creates the test client and returns its id.
func createClient(t *testing.T, a *App) float64 {
	t.Helper()
	v := call(t, a, "POST", "/api/v1/clients?token="+testOperator, map[string]any{"name": "Acme", "document_type": 2,
		"document_number": testDocument, "phone": "11", "cep": "01000-000", "address": "Rua A", "address_number": "10",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2,
			"password": "password1", "password_conf": "password1"}}}, 201)
	return v.([]any)[0].(map[string]any)["id"].(float64)
}

// pushCamera is an RTMP push camera (no typed_url) of the client.
func pushCamera(client float64, days int) map[string]any {
	return map[string]any{"description": "push", "camera_address": "a", "latitude": "1", "longitude": "1",
		"connection_type": 1, "resolution_id": 1, "history_days": days, "client_id": client}
}

// created returns the id and rtmp_url of a create or update answer.
func created(v any) (string, string) {
	m := v.([]any)[0].(map[string]any)
	u, _ := m["rtmp_url"].(string)
	return strconv.FormatInt(int64(m["id"].(float64)), 10), u
}

// TestServeRTMPURLFollowsListener: in a node wired like `vigia serve`
// whose rtmp.addr listens on a port chosen at run time, the rtmp_url the
// API hands a push camera names that port, and FFmpeg publishing to it is
// recorded; api.rtmp_url, when set, is used as given.
func TestServeRTMPURLFollowsListener(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	a := apiApp(t, Mode{Name: "serve", Recorder: true, Cluster: true, API: true}, nil)
	_, port, err := net.SplitHostPort(a.RTMPServer().Addr())
	if err != nil || port == "" || port == "0" {
		t.Fatalf("rtmp listener %q: %v", a.RTMPServer().Addr(), err)
	}
	client := createClient(t, a)
	id, rtmpURL := created(call(t, a, "POST", "/api/v1/cameras?token="+testOperator, pushCamera(client, 1), 201))
	u, err := url.Parse(rtmpURL)
	if err != nil || u.Port() != port || u.Hostname() != "127.0.0.1" || u.Path != "/live/"+id || u.Query().Get("key") == "" {
		t.Fatalf("rtmp_url %q, want rtmp://127.0.0.1:%s/live/%s?key=…", rtmpURL, port, id)
	}
	// The update answer carries the same address.
	if _, again := created(call(t, a, "PUT", "/api/v1/cameras/"+id+"?token="+testOperator, pushCamera(client, 3), 201)); again != rtmpURL {
		t.Fatalf("update rtmp_url %q, create gave %q", again, rtmpURL)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ff := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-re", "-stream_loop", "-1", "-f", "h264", "-r", "15",
		"-i", filepath.Join("..", "synth", "fixtures", "h264_360p.h264"), "-c", "copy", "-f", "flv", rtmpURL)
	var stderr bytes.Buffer
	ff.Stderr = &stderr
	if err := ff.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = ff.Wait()
		if t.Failed() {
			t.Logf("ffmpeg: %s", stderr.String())
		}
	})
	testenv.WaitFor(t, 60*time.Second, "a segment of the pushed camera", func() bool {
		return len(listKeys(t, a.Store(), storage.CameraSegmentsPrefix(id))) > 0
	})

	// A configured api.rtmp_url is the base, whatever rtmp.addr is.
	b := apiApp(t, Mode{Name: "serve", Recorder: true, Cluster: true, API: true}, func(c *config.Config) {
		c.API.RTMPURL = "rtmp://push.example.com:1936/ingest"
	})
	id, rtmpURL = created(call(t, b, "POST", "/api/v1/cameras?token="+testOperator, pushCamera(createClient(t, b), 1), 201))
	if !strings.HasPrefix(rtmpURL, "rtmp://push.example.com:1936/ingest/"+id+"?key=") {
		t.Fatalf("rtmp_url with api.rtmp_url set: %q", rtmpURL)
	}
}
