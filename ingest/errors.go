package ingest

import (
	"errors"
	"fmt"
)

// Reasons of permanent failures.
const (
	ReasonAuth        = "bad credentials"
	ReasonNotFound    = "unknown stream"
	ReasonUnsupported = "unsupported codec"
	ReasonBadURL      = "invalid camera url"
	ReasonForbidden   = "address not allowed"
	ReasonTLS         = "certificate not trusted"
	ReasonTransport   = "unsupported transport"
)

// ErrUnsupportedScheme is returned for a URL scheme no driver handles.
var ErrUnsupportedScheme = errors.New("unsupported url scheme")

// ErrAwaitingCamera is the last error of a passive camera (a push) that has
// not sent anything yet.
var ErrAwaitingCamera = errors.New("waiting for the camera to connect and publish")

// ErrReadTimeout is returned when a camera sends nothing for the read timeout.
var ErrReadTimeout = errors.New("no data received within the read timeout")

// PermanentError is a failure that retrying will not fix without a change
// (credentials, path, codec, URL). The camera's status becomes ERRO
// PERMANENTE and it is retried slowly.
type PermanentError struct {
	Reason string
	Err    error
}

// Error implements error.
func (e *PermanentError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return fmt.Sprintf("%s: %v", e.Reason, e.Err)
}

// Unwrap returns the cause.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err as a permanent failure with reason.
func Permanent(reason string, err error) error {
	return &PermanentError{Reason: reason, Err: err}
}

// IsPermanent reports whether err is a permanent failure and returns it.
func IsPermanent(err error) (*PermanentError, bool) {
	var pe *PermanentError
	if errors.As(err, &pe) {
		return pe, true
	}
	return nil, false
}
