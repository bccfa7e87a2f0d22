package bus

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"defaults embedded", Options{}, true},
		{"random port", Options{Listen: "127.0.0.1:0"}, true},
		{"external replicas 3", Options{URL: "nats://h:4222", Replicas: 3}, true},
		{"embedded replicas 3", Options{Replicas: 3}, false},
		{"negative replicas", Options{URL: "nats://h:4222", Replicas: -1}, false},
		{"listen without port", Options{Listen: "127.0.0.1"}, false},
		{"listen bad port", Options{Listen: "127.0.0.1:http"}, false},
		{"listen port too big", Options{Listen: "127.0.0.1:70000"}, false},
		{"localhost", Options{Listen: "localhost:4222"}, true},
		{"ipv6 loopback", Options{Listen: "[::1]:4222"}, true},
		{"every interface without a token", Options{Listen: "0.0.0.0:4222"}, false},
		{"empty host without a token", Options{Listen: ":4222"}, false},
		{"lan address without a token", Options{Listen: "192.168.1.10:4222"}, false},
		{"every interface with a token", Options{Listen: "0.0.0.0:4222", Token: "s3cret"}, true},
		{"external server without a token", Options{URL: "nats://10.0.0.5:4222"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.withDefaults().validate()
			if tt.ok && err != nil {
				t.Fatalf("validate: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("validate = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestSplitListenRandomPort(t *testing.T) {
	host, port, err := splitListen("127.0.0.1:0")
	if err != nil || host != "127.0.0.1" || port != -1 {
		t.Fatalf("splitListen = %q, %d, %v; want 127.0.0.1, -1, nil", host, port, err)
	}
}

// TestEmbeddedMaxConns: past MaxConns the embedded server refuses clients.
func TestEmbeddedMaxConns(t *testing.T) {
	opts := testOptions(t)
	opts.MaxConns = 2 // the Bus's own connection and one more
	b := openTest(t, opts)
	nc, err := nats.Connect(b.ClientURL(), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("second client: %v", err)
	}
	defer nc.Close()
	third, err := nats.Connect(b.ClientURL(), nats.MaxReconnects(0))
	if err == nil {
		third.Close()
		t.Fatal("third client connected past MaxConns 2")
	}
	// The server says "maximum connections exceeded" and closes; the
	// client sees that or the closed socket, depending on timing.
	t.Logf("third client refused: %v", err)
}
