package bus

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
)

// snapshotConcurrency bounds the snapshot requests a node serves at once;
// more wait in the subscription.
const snapshotConcurrency = 4

// SnapshotHandler answers a snapshot request for camera with the reply
// payload; ok false means the camera is not recorded on this node, and no
// reply is sent (the node that records it answers).
type SnapshotHandler func(camera string) (reply []byte, ok bool)

// ServeSnapshots answers requests on vigia.snapshot.{camera} with handler,
// at most 4 at a time. stop unsubscribes and waits for the requests being
// answered.
func (b *Bus) ServeSnapshots(handler SnapshotHandler) (stop func(), err error) {
	if err := b.usable(); err != nil {
		return nil, fmt.Errorf("serve snapshots: %w", err)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		stopped bool
	)
	sem := make(chan struct{}, snapshotConcurrency)
	sub, err := b.nc.Subscribe(SubjectSnapshotPrefix+"*", func(m *nats.Msg) {
		camera := m.Subject[len(SubjectSnapshotPrefix):]
		if validCamera(camera) != nil || m.Reply == "" {
			return
		}
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		wg.Add(1)
		mu.Unlock()
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			reply, ok := handler(camera)
			if !ok {
				return
			}
			if err := m.Respond(reply); err != nil {
				b.log.Debug("snapshot reply not sent", zap.String("camera", camera), zap.Error(err))
			}
		}()
	})
	if err != nil {
		return nil, fmt.Errorf("serve snapshots: %w", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			stopped = true
			mu.Unlock()
			_ = sub.Unsubscribe()
			wg.Wait()
		})
	}, nil
}

// RequestSnapshot asks the node recording camera for a snapshot and returns
// its reply payload. It fails by ctx's deadline (5 seconds without one)
// when no node answers.
func (b *Bus) RequestSnapshot(ctx context.Context, camera string) ([]byte, error) {
	if err := validCamera(camera); err != nil {
		return nil, fmt.Errorf("request snapshot: %w", err)
	}
	if err := b.usable(); err != nil {
		return nil, fmt.Errorf("request snapshot %s: %w", camera, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pingTimeout)
		defer cancel()
	}
	m, err := b.nc.RequestWithContext(ctx, SnapshotSubject(camera), nil)
	if err != nil {
		return nil, fmt.Errorf("request snapshot %s: %w", camera, err)
	}
	return m.Data, nil
}
