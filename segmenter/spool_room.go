package segmenter

import (
	"io/fs"
	"os"
	"path/filepath"
)

// SpoolRoom returns the bytes a spool in dir can use: the free space of
// dir's file system plus what the files under dir hold already (segments
// left by a previous run, which stay the spool's). A dir not created yet is
// measured at its nearest existing parent. It returns -1 where free space
// is unknown.
func SpoolRoom(dir string) int64 {
	existing := ExistingDir(dir)
	free := freeBytes(existing)
	if free < 0 {
		return -1
	}
	if existing != dir {
		return free
	}
	return free + heldBytes(dir)
}

// heldBytes returns the bytes of the regular files under dir.
func heldBytes(dir string) int64 {
	var held int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			held += info.Size()
		}
		return nil
	})
	return held
}

// ExistingDir returns dir, or its nearest parent that exists when dir does
// not yet.
func ExistingDir(dir string) string {
	existing := dir
	for {
		if _, err := os.Stat(existing); err == nil {
			return existing
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return existing
		}
		existing = parent
	}
}
