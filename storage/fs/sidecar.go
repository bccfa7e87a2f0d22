package fs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// sidecar holds what an object carries besides its bytes.
type sidecar struct {
	ContentType string            `json:"content_type,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

func (s sidecar) empty() bool {
	return s.ContentType == "" && len(s.Metadata) == 0 && len(s.Tags) == 0
}

// writeSidecar stores sc for key, or removes a stale one when sc is empty.
func (f *FS) writeSidecar(key string, sc sidecar) error {
	name := f.sidecarPath(key)
	if sc.empty() {
		return removeIfExists(name)
	}
	data, err := json.Marshal(sc)
	if err != nil {
		return fmt.Errorf("encode sidecar: %w", err)
	}
	return writeFileAtomic(name, data)
}

// readSidecar returns the sidecar of key, empty when there is none.
func (f *FS) readSidecar(key string) (sidecar, error) {
	var sc sidecar
	data, err := os.ReadFile(f.sidecarPath(key))
	if err != nil {
		if isNotFound(err) {
			return sc, nil
		}
		return sc, err
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		return sc, fmt.Errorf("decode sidecar of %q: %w", key, err)
	}
	return sc, nil
}

// removeSidecar deletes the sidecar of key and prunes emptied directories.
func (f *FS) removeSidecar(key string) error {
	name := f.sidecarPath(key)
	if err := removeIfExists(name); err != nil {
		return err
	}
	pruneEmptyDirs(filepath.Dir(name), filepath.Join(f.root, metaDir))
	return nil
}
