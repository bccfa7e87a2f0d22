package storage

import "errors"

// Errors returned (wrapped) by stores and key helpers. Test them with errors.Is.
var (
	// ErrNotFound means the object does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrInvalidKey means a key or prefix was refused by ValidateKey or ValidatePrefix.
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidRange means a Get asked for bytes past the end of the object.
	ErrInvalidRange = errors.New("invalid range")
	// ErrInvalidMetadata means user metadata or tags were refused.
	ErrInvalidMetadata = errors.New("invalid metadata")
	// ErrSizeMismatch means Put read a different number of bytes than its size said.
	ErrSizeMismatch = errors.New("size mismatch")
	// ErrInvalidExpiry means a signed URL was asked with an expiry the store cannot give.
	ErrInvalidExpiry = errors.New("invalid signed url expiry")
	// ErrInvalidSegmentKey means ParseSegmentKey was given a key that is not a
	// well-formed recording segment key.
	ErrInvalidSegmentKey = errors.New("invalid segment key")
)
