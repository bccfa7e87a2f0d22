package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vigia/vigia/storage"
)

// Delete removes the objects and their sidecars, then the directories they
// leave empty. Keys that do not exist are skipped. All keys are validated
// before anything is removed.
func (f *FS) Delete(ctx context.Context, keys []string) error {
	for _, key := range keys {
		if err := storage.ValidateKey(key); err != nil {
			return fmt.Errorf("fs delete: %w", err)
		}
	}
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("fs delete: %w", err)
		}
		name := f.path(key)
		if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
			continue // a directory holds other keys; it is not this object
		}
		if err := removeIfExists(name); err != nil {
			return fmt.Errorf("fs delete %q: %w", key, err)
		}
		if err := f.removeSidecar(key); err != nil {
			return fmt.Errorf("fs delete %q: sidecar: %w", key, err)
		}
		pruneEmptyDirs(filepath.Dir(name), f.root)
	}
	return nil
}
