package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// createTempAttempts bounds the retries of createTemp when a concurrent
// Delete removes the freshly made directory.
const createTempAttempts = 5

// createTemp makes dir (and its parents) and a temporary file in it.
func createTemp(dir string) (*os.File, error) {
	var err error
	for range createTempAttempts {
		if err = os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		var tmp *os.File
		tmp, err = os.CreateTemp(dir, tempPrefix+"*")
		if err == nil {
			return tmp, nil
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, err
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
