package bus

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
)

// TestKeepRunning: a consumer that fails is started again after the
// pause, not before, until the context ends.
func TestKeepRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var starts []time.Time
		done := make(chan struct{})
		go func() {
			defer close(done)
			keepRunning(ctx, 2*time.Second, func(ctx context.Context) error {
				starts = append(starts, time.Now())
				if len(starts) < 3 {
					return errors.New("no servers available")
				}
				<-ctx.Done()
				return ctx.Err()
			}, zap.NewNop())
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(starts) != 3 {
			t.Fatalf("started %d times, want 3", len(starts))
		}
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(starts[i-1]); d != 2*time.Second {
				t.Fatalf("start %d came %v after the one before, want 2s", i, d)
			}
		}
		cancel()
		<-done
	})
}
