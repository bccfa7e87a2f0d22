//go:build linux

package segmenter

import (
	"os"

	"golang.org/x/sys/unix"
)

// groupSyncSupported reports whether SyncGroup is available.
const groupSyncSupported = true

// syncFS writes back the filesystem of d and waits for it.
func syncFS(d *os.File) error {
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Syncfs(int(fd)) }); err != nil {
		return err
	}
	return serr
}
