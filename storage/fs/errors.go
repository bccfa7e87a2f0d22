package fs

import "errors"

// Errors of the fs store, besides those of package storage.
var (
	// ErrSigningDisabled means SignedURL was called on a store without BaseURL.
	ErrSigningDisabled = errors.New("signed urls disabled: no base url")
	// ErrWeakSecret means a BaseURL was given with a signing secret shorter than 16 bytes.
	ErrWeakSecret = errors.New("signing secret shorter than 16 bytes")

	// errPageFull stops a listing walk once one entry past the page has been seen.
	errPageFull = errors.New("page full")
)
