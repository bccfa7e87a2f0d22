package rtmp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/synth"
)

// TestPushKeyGeneration: with a registry naming key generation 2, a key
// of generation 0 is refused as a bad key and one of generation 2 passes
// the key check (then is refused only because no node records the
// camera); while the registry fails, the generation last read holds.
func TestPushKeyGeneration(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	gen, fail := 2, false
	ref := &refusals{}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Keys: testKeys(t), ReadTimeout: 3 * time.Second, Hold: time.Second,
		OnRefused: ref.add, Log: zap.NewNop(),
		KeyGen: func(context.Context, string) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return 0, errors.New("registry unreachable")
			}
			return gen, nil
		}})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	base := pushURL(s, "cam9")
	withGen := func(g int) string {
		return strings.Replace(base, "key="+PushKey(testSecret, "cam9"), "key="+camera.PushKeyGen(testKeys(t), "cam9", g), 1)
	}
	publish := func(u string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n := len(ref.list())
		if err := synth.PublishRTMP(ctx, u, synth.RTMPStreamSpec{}); !errors.Is(err, synth.ErrRTMPRefused) {
			t.Fatalf("publish: %v, want refused", err)
		}
		got := ref.list()
		if len(got) != n+1 {
			t.Fatalf("refusals %v", got)
		}
		return got[n]
	}
	for _, phase := range []string{"registry answers", "registry fails"} {
		if got := publish(withGen(0)); got != RefusedBadKey {
			t.Errorf("%s: the key of generation 0 refused as %s, want %s", phase, got, RefusedBadKey)
		}
		if got := publish(withGen(1)); got != RefusedBadKey {
			t.Errorf("%s: the key of generation 1 refused as %s, want %s", phase, got, RefusedBadKey)
		}
		if got := publish(withGen(2)); got != RefusedNotRecorded {
			t.Errorf("%s: the key of generation 2 refused as %s, want %s", phase, got, RefusedNotRecorded)
		}
		mu.Lock()
		fail = true
		mu.Unlock()
	}
}
