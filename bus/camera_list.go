package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/vigia/vigia/camera"
)

// ListCameras returns every record of BucketCameras (for the retention
// sweeper). A record that cannot be read is left out and reported in the
// joined error, next to the others.
func (b *Bus) ListCameras(ctx context.Context) ([]camera.Config, error) {
	keys, err := b.KVKeys(ctx, BucketCameras)
	if err != nil {
		return nil, fmt.Errorf("list cameras: %w", err)
	}
	var out []camera.Config
	var errs []error
	for _, k := range keys {
		c, ok, err := b.GetCamera(ctx, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}
