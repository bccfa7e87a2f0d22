package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/sign"
)

// recorderConfig returns the configuration of a recorder node on the NATS
// server at natsURL, with secret.
func recorderConfig(t *testing.T, node, natsURL, secret string) *config.Config {
	t.Helper()
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = node
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.URL = natsURL
	c.RTMP.Addr = "127.0.0.1:0"
	c.Security.Secret = secret
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	c.HTTP.PublicURL = ""
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// testNATS opens an embedded NATS server for the test and returns its URL.
func testNATS(t *testing.T) (*bus.Bus, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, b.Conn().ConnectedUrl()
}

// TestRecorderSecretMismatch: two recorders with different secrets on one
// NATS: the first starts and publishes its secret's fingerprint, the
// second refuses to start with one line naming security.secret and both
// fingerprints, and a third with the first's secret starts.
func TestRecorderSecretMismatch(t *testing.T) {
	b, url := testNATS(t)
	mode := Mode{Name: "recorder", Recorder: true, Cluster: true, RequireSecret: true}
	start := func(node, secret string) (*App, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := New(ctx, recorderConfig(t, node, url, secret), mode, zap.NewNop())
		if a != nil {
			t.Cleanup(a.Close)
		}
		return a, err
	}
	first := strings.Repeat("a", 32)
	if _, err := start("rec-1", first); err != nil {
		t.Fatalf("first recorder: %v", err)
	}
	raw, _, err := b.KVGet(context.Background(), bus.BucketCluster, bus.KeySecretFingerprint)
	if err != nil {
		t.Fatalf("fingerprint record: %v", err)
	}
	if strings.Contains(string(raw), first) {
		t.Fatalf("the record holds the secret: %s", raw)
	}
	var rec bus.SecretFingerprint
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Current != cluster.SecretFingerprint([]byte(first)) || rec.Node != "rec-1" {
		t.Fatalf("record %s (%v), want the fingerprint of the first secret by rec-1", raw, err)
	}

	_, err = start("rec-2", strings.Repeat("b", 32))
	if !errors.Is(err, cluster.ErrSecretMismatch) {
		t.Fatalf("second recorder with another secret: %v, want cluster.ErrSecretMismatch", err)
	}
	msg := err.Error()
	for _, want := range []string{"security.secret", cluster.SecretFingerprint([]byte(first)), `"rec-1"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %s", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is more than one line: %q", msg)
	}

	if _, err := start("rec-3", first); err != nil {
		t.Fatalf("third recorder with the cluster's secret: %v", err)
	}
}

// TestRecorderRequiresSecret: a recorder never generates a secret of its
// own (sign.LoadSecret without generate), even with one that serve kept
// under its data_dir.
func TestRecorderRequiresSecret(t *testing.T) {
	c := recorderConfig(t, "rec-1", "nats://127.0.0.1:1", "")
	if _, err := sign.LoadSecret("", c.DataDir, true); err != nil {
		t.Fatal(err)
	}
	mode := Mode{Name: "recorder", Recorder: true, Cluster: true, RequireSecret: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if a, err := New(ctx, c, mode, zap.NewNop()); !errors.Is(err, sign.ErrSecretRequired) {
		if a != nil {
			a.Close()
		}
		t.Fatalf("recorder without a secret: %v, want sign.ErrSecretRequired", err)
	}
}
