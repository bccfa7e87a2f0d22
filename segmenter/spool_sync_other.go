//go:build !linux

package segmenter

import (
	"errors"
	"os"
)

// groupSyncSupported reports whether SyncGroup is available.
const groupSyncSupported = false

func syncFS(*os.File) error { return errors.New("syncfs is not available") }
