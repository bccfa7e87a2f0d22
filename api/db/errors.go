package db

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrNotFound means the row asked for does not exist.
	ErrNotFound = errors.New("not found")

	// ErrDuplicate means a unique value (document number, e-mail, event id)
	// is already taken.
	ErrDuplicate = errors.New("duplicate")

	// ErrURL means the database URL is not one Open understands.
	ErrURL = errors.New("unsupported database url")
)
