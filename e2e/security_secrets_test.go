package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestSecretHygiene runs a cluster node (static cameras in the NATS
// registry, leases, status, segment notices) with password-protected
// cameras (one with a wrong password), an S3 secret key, a NATS token, an
// HMAC secret and an operator token, then reads everything it exposed: every
// log line, /metrics, the node's pages, every message published on NATS
// while it ran and everything kept in the streams and KV buckets. None of the
// secrets appears anywhere.
func TestSecretHygiene(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	const (
		camPass   = "Cam-Pa55word-0f-the-owner"
		wrongPass = "Wr0ng-Pa55word-typed"
		natsToken = "Nats-T0ken-kept-secret-4242"
		hmacKey   = "Hmac-Secret-0123456789abcdef-xyz"
		opToken   = "Operat0r-T0ken-do-not-leak"
	)
	cams := startSynth(t,
		synth.CameraSpec{Path: "locked", Codec: "h264", Audio: true, User: "admin", Pass: camPass},
		synth.CameraSpec{Path: "typo", Codec: "h264", User: "admin", Pass: camPass},
	)
	c := s3Config(t, m)
	c.Motion.Enabled = false
	c.NATS.Token = natsToken
	c.Security.Secret = hmacKey
	c.OperatorToken = opToken
	c.NodeID = "secret-node"
	withPass := func(path, pass string) string {
		return strings.Replace(cams.URL(path), "rtsp://", "rtsp://admin:"+pass+"@", 1)
	}
	c.Cameras = []config.Camera{
		{ID: "locked", URL: withPass("locked", camPass), HistoryDays: 1, Sound: 1},
		{ID: "typo", URL: withPass("typo", wrongPass), HistoryDays: 1},
	}
	secrets := map[string]string{
		"camera password": camPass, "wrong camera password": wrongPass, "NATS token": natsToken,
		"HMAC secret": hmacKey, "operator token": opToken, "S3 secret key": c.Storage.SecretKey,
	}
	log, logs := testLogger(t)
	a := startAppMode(t, c, app.Mode{Name: "recorder", Recorder: true, Cluster: true}, log)

	// Everything published while the node runs.
	var mu sync.Mutex
	var wire strings.Builder
	sub, err := a.Bus().Conn().Subscribe(">", func(msg *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		wire.WriteString(msg.Subject)
		wire.WriteByte(' ')
		wire.Write(msg.Data)
		for k, v := range msg.Header {
			wire.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		wire.WriteByte('\n')
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	st := openS3(t, c)
	waitSegments(t, st, "locked", 3, 60*time.Second)
	testenv.WaitFor(t, 30*time.Second, "the wrong password refused", func() bool {
		s, ok := a.Recorder().Status("typo")
		return ok && s.Code == status.Permanent
	})

	exposed := map[string]string{"logs": logs.String()}
	for _, path := range []string{"/metrics", "/", "/readyz", "/healthz", "/recordings/locked"} {
		req, err := http.NewRequest(http.MethodGet, a.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e2eMetricsToken) // /metrics is read as a scraper does
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		exposed[path] = string(b)
	}
	// Without a token /metrics names nothing (camera ids, storage).
	if res, err := http.Get(a.URL() + "/metrics"); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "vigia_") {
			t.Errorf("/metrics without a token answered %d: %.200s", res.StatusCode, b)
		}
	}
	if !strings.Contains(exposed["/metrics"], "vigia_segments_stored_total") {
		t.Error("/metrics lacks the recorder metrics")
	}
	exposed["streams and buckets"] = readAllStreams(t, a.Bus().JetStream())
	if !strings.Contains(exposed["streams and buckets"], `"sealed_url"`) {
		t.Error("the camera registry was not read")
	}
	mu.Lock()
	exposed["NATS messages"] = wire.String()
	mu.Unlock()
	if !strings.Contains(exposed["NATS messages"], "vigia.segments.locked") {
		t.Error("the segment notices were not captured")
	}
	for where, text := range exposed {
		for what, secret := range secrets {
			if secret != "" && strings.Contains(text, secret) {
				t.Errorf("the %s appears in %s", what, where)
			}
		}
	}
}

// readAllStreams returns the subjects and payloads of every message kept
// in every stream (KV buckets are streams too).
func readAllStreams(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	names := js.StreamNames(ctx)
	for name := range names.Name() {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			msg, err := s.GetMsg(ctx, seq)
			if err != nil {
				continue // deleted or expired
			}
			out.WriteString(name + " " + msg.Subject + " ")
			out.Write(msg.Data)
			out.WriteByte('\n')
		}
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
