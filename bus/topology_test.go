package bus

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A topology request whose attempt times out is sent again until the
// caller's deadline; any other error ends it at once.
func TestTopologyAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		err := attempts(context.Background(), func(ctx context.Context) error {
			n++
			if n < 3 {
				<-ctx.Done()
				return fmt.Errorf("create: %w", ctx.Err())
			}
			return nil
		})
		if err != nil || n != 3 {
			t.Fatalf("attempts: %v after %d calls, want nil after 3", err, n)
		}
		n = 0
		bad := errors.New("bad config")
		if err := attempts(context.Background(), func(context.Context) error { n++; return bad }); !errors.Is(err, bad) || n != 1 {
			t.Fatalf("attempts: %v after %d calls, want the error after 1", err, n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
		defer cancel()
		n = 0
		err = attempts(ctx, func(ctx context.Context) error { n++; <-ctx.Done(); return ctx.Err() })
		if !errors.Is(err, context.DeadlineExceeded) || n != 3 {
			t.Fatalf("attempts: %v after %d calls, want the deadline after 3", err, n)
		}
	})
}
