package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigia/vigia/status"
)

// GetStatus returns the last status stored for camera; ok is false when
// there is none.
func (b *Bus) GetStatus(ctx context.Context, camera string) (s status.Status, ok bool, err error) {
	if err := validCamera(camera); err != nil {
		return status.Status{}, false, fmt.Errorf("get status: %w", err)
	}
	if b.closing.Load() {
		return status.Status{}, false, fmt.Errorf("get status %s: %w", camera, ErrClosed)
	}
	kv := b.KV(BucketCameraStatus)
	if kv == nil {
		return status.Status{}, false, fmt.Errorf("get status %s: %w: bucket %s not open", camera, ErrTopology, BucketCameraStatus)
	}
	e, err := kv.Get(ctx, camera)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return status.Status{}, false, nil
	}
	if err != nil {
		return status.Status{}, false, fmt.Errorf("get status %s: %w", camera, err)
	}
	if err := json.Unmarshal(e.Value(), &s); err != nil {
		return status.Status{}, false, fmt.Errorf("get status %s: decode: %w", camera, err)
	}
	return s, true, nil
}

// marshalStatus validates s and returns its JSON, filling an empty Text.
func marshalStatus(s status.Status) ([]byte, error) {
	if err := validCamera(s.Camera); err != nil {
		return nil, fmt.Errorf("publish status: %w", err)
	}
	if s.Text == "" {
		s.Text = s.Code.Text()
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("publish status %s: encode: %w", s.Camera, err)
	}
	return data, nil
}

// ListStatus returns every record of BucketCameraStatus. A record that
// cannot be read is left out and reported in the joined error, next to the
// others.
func (b *Bus) ListStatus(ctx context.Context) ([]status.Status, error) {
	keys, err := b.KVKeys(ctx, BucketCameraStatus)
	if err != nil {
		return nil, fmt.Errorf("list status: %w", err)
	}
	var out []status.Status
	var errs []error
	for _, k := range keys {
		s, ok, err := b.GetStatus(ctx, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, errors.Join(errs...)
}
