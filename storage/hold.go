package storage

import (
	"context"
	"errors"
)

// ErrNoObjectLock is wrapped by LegalHolder calls on a bucket without
// Object Lock.
var ErrNoObjectLock = errors.New("storage: the bucket has no object lock")

// LegalHolder is implemented by stores that can put an object under a legal
// hold the store itself enforces (S3 Object Lock): while it is on, the
// object's data cannot be deleted, not even with the store's credentials.
type LegalHolder interface {
	// SetLegalHold places (on) or lifts the legal hold of key. Missing
	// objects wrap ErrNotFound.
	SetLegalHold(ctx context.Context, key string, on bool) error
	// LegalHold reports whether key is under a legal hold.
	LegalHold(ctx context.Context, key string) (bool, error)
}
