package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vigia/vigia/camera"
)

// PutCamera writes c (its JSON as is) into BucketCameras under c.ID.
func (b *Bus) PutCamera(ctx context.Context, c camera.Config) error {
	if err := validCamera(c.ID); err != nil {
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
	if err := validCamera(id); err != nil {
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

// GetCamera returns camera id from BucketCameras (camera.Decode); ok is
// false when it is not there. A record that does not decode is an error
// wrapping camera.ErrInvalid.
func (b *Bus) GetCamera(ctx context.Context, id string) (c camera.Config, ok bool, err error) {
	if err := validCamera(id); err != nil {
		return camera.Config{}, false, fmt.Errorf("get camera: %w", err)
	}
	e, err := b.Bucket(BucketCameras).Get(ctx, id)
	if errors.Is(err, ErrKeyNotFound) {
		return camera.Config{}, false, nil
	}
	if err != nil {
		return camera.Config{}, false, fmt.Errorf("get camera %s: %w", id, err)
	}
	if c, err = camera.Decode(id, e.Value); err != nil {
		return camera.Config{}, false, fmt.Errorf("get camera: %w", err)
	}
	return c, true, nil
}
