package p2p

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/ingest"
)

// TestConfiguredDriver: without p2p.resolver, or with one that does not
// build, a P2P camera fails permanently, naming why; only the broken
// setting is logged.
func TestConfiguredDriver(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       string
		logged     bool
	}{
		{"none", "", ErrNoResolver.Error(), false},
		{"not a url", "resolver", "not a url", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zap.InfoLevel)
			drv := ConfiguredDriver(tc.spec, "", time.Second, ingest.Registry{}, zap.New(core))
			src, err := drv(ingest.Camera{ID: "cam", URL: URL("ABC123", "pw", "")}, ingest.SourceConfig{})
			if err != nil {
				t.Fatal(err)
			}
			err = src.Run(context.Background(), nil)
			var perm *ingest.PermanentError
			if !errors.As(err, &perm) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want a permanent error naming %q", err, tc.want)
			}
			if (logs.Len() > 0) != tc.logged {
				t.Fatalf("logged %v, want %v", logs.All(), tc.logged)
			}
		})
	}
}
