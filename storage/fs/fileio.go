package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// dirMu orders the making of directories (with the file that keeps each
// non-empty) against the pruning of emptied ones, for every store of the
// process: a Put never sees a parent vanish while it makes its directory.
var dirMu sync.RWMutex

// createTempAttempts bounds the retries of createTemp when another process
// prunes the freshly made directory or one of its parents.
const createTempAttempts = 5

// createTemp makes dir (and its parents) and a temporary file in it.
func createTemp(dir string) (*os.File, error) {
	var err error
	for range createTempAttempts {
		var tmp *os.File
		tmp, err = mkdirCreateTemp(dir)
		if err == nil || !(errors.Is(err, iofs.ErrNotExist) || errors.Is(err, iofs.ErrExist)) {
			return tmp, err
		}
		// A parent pruned while it was being made (ErrNotExist), or made
		// and pruned again between MkdirAll's steps (ErrExist): again.
	}
	return nil, err
}

func mkdirCreateTemp(dir string) (*os.File, error) {
	dirMu.RLock()
	defer dirMu.RUnlock()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, tempPrefix+"*")
}

// syncDir fsyncs a directory so a rename into it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// writeFileAtomic writes data to name through a synced temporary file and a rename.
func writeFileAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	tmp, err := createTemp(dir)
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return syncDir(dir)
}

// isNotFound reports whether err means the path does not exist.
func isNotFound(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// removeIfExists removes a file, treating a missing one as removed.
func removeIfExists(name string) error {
	if err := os.Remove(name); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

// pruneEmptyDirs removes dir and its parents while they are empty, stopping at stop.
func pruneEmptyDirs(dir, stop string) {
	dirMu.Lock()
	defer dirMu.Unlock()
	for dir != stop && len(dir) > len(stop) {
		if err := os.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// statFile stats a regular file, mapping missing files and directories to not found.
func statFile(name string) (os.FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, iofs.ErrNotExist)
	}
	return fi, nil
}
