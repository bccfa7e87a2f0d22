package motion

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrClosed means the Service was closed.
	ErrClosed = errors.New("motion detection closed")
)
