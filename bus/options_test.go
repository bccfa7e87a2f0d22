package bus

import (
	"errors"
	"testing"
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
