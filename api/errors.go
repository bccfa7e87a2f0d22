package api

import "errors"

// Sentinel errors returned (wrapped) by this package.
var (
	// ErrConfig means the server configuration is not usable; the message
	// names the field.
	ErrConfig = errors.New("invalid api configuration")

	// ErrUnavailable is returned by an optional integration (live, snapshots,
	// exports) that this node does not have.
	ErrUnavailable = errors.New("not available")
)
