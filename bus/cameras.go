package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
)

// PutCamera writes c (its JSON as is) into BucketCameras under c.ID.
func (b *Bus) PutCamera(ctx context.Context, c camera.Config) error {
	if err := ValidateCamera(c.ID); err != nil {
		return fmt.Errorf("put camera: %w", err)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("put camera %s: encode: %w", c.ID, err)
	}
	if _, err := b.Bucket(BucketCameras).Put(ctx, c.ID, data); err != nil {
		return fmt.Errorf("put camera %s: %w", c.ID, err)
	}
	return nil
}

// DeleteCamera removes camera id from BucketCameras. Removing a camera that
// is not there is not an error.
func (b *Bus) DeleteCamera(ctx context.Context, id string) error {
	if err := ValidateCamera(id); err != nil {
		return fmt.Errorf("delete camera: %w", err)
	}
	kv := b.Bucket(BucketCameras)
	if _, err := kv.Get(ctx, id); errors.Is(err, ErrKeyNotFound) {
		return nil // nothing to remove: no delete marker for watchers
	}
	if err := kv.Delete(ctx, id, 0); err != nil && !errors.Is(err, ErrKeyNotFound) {
		return fmt.Errorf("delete camera %s: %w", id, err)
	}
	return nil
}

// GetCamera returns camera id from BucketCameras; ok is false when it is
// not there.
func (b *Bus) GetCamera(ctx context.Context, id string) (c camera.Config, ok bool, err error) {
	if err := ValidateCamera(id); err != nil {
		return camera.Config{}, false, fmt.Errorf("get camera: %w", err)
	}
	e, err := b.Bucket(BucketCameras).Get(ctx, id)
	if errors.Is(err, ErrKeyNotFound) {
		return camera.Config{}, false, nil
	}
	if err != nil {
		return camera.Config{}, false, fmt.Errorf("get camera %s: %w", id, err)
	}
	if err := json.Unmarshal(e.Value, &c); err != nil {
		return camera.Config{}, false, fmt.Errorf("get camera %s: decode: %w", id, err)
	}
	return c, true, nil
}

// CameraChange is one change seen by WatchCameras: a camera put (Deleted
// false, Config set) or removed (Deleted true, only ID set).
type CameraChange struct {
	ID      string
	Deleted bool
	Config  camera.Config
}

// WatchCameras calls fn with every camera of BucketCameras, then with each
// change, until ctx ends or the watch fails; it blocks. After the initial
// cameras, fn is called once with a zero CameraChange (empty ID) to mark that
// the current state has been delivered. Entries that do not decode are
// skipped (logged).
func (b *Bus) WatchCameras(ctx context.Context, fn func(CameraChange)) error {
	kv, err := b.camerasKV()
	if err != nil {
		return fmt.Errorf("watch cameras: %w", err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch cameras: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("watch cameras: %w", ErrClosed)
			}
			if e == nil {
				fn(CameraChange{})
				continue
			}
			switch e.Operation() {
			case jetstream.KeyValueDelete, jetstream.KeyValuePurge:
				fn(CameraChange{ID: e.Key(), Deleted: true})
			default:
				var c camera.Config
				if err := json.Unmarshal(e.Value(), &c); err != nil {
					b.log.Warn("camera entry does not decode", zap.String("camera", e.Key()), zap.Error(err))
					continue
				}
				fn(CameraChange{ID: e.Key(), Config: c})
			}
		}
	}
}

func (b *Bus) camerasKV() (jetstream.KeyValue, error) {
	if b.closing.Load() {
		return nil, ErrClosed
	}
	kv := b.KV(BucketCameras)
	if kv == nil {
		return nil, fmt.Errorf("%w: bucket %s not open", ErrTopology, BucketCameras)
	}
	return kv, nil
}
