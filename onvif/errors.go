package onvif

import (
	"errors"
	"fmt"
)

var (
	// ErrResponseTooLarge is returned when a response exceeds MaxResponseBytes.
	ErrResponseTooLarge = errors.New("onvif: response too large")
	// ErrUnauthorized is returned when the camera refuses the credentials
	// (HTTP 401 after digest, or a SOAP fault naming NotAuthorized).
	ErrUnauthorized = errors.New("onvif: not authorized")
	// ErrMalformed is returned when a response is not a SOAP envelope or
	// lacks an element the operation needs.
	ErrMalformed = errors.New("onvif: malformed response")
	// ErrNoService is returned when the device advertises no address for a
	// service (callers may fall back to the device address).
	ErrNoService = errors.New("onvif: service not advertised")
	// ErrNoNotify is returned by Push.Run when no Notify message arrived
	// within Push.FirstNotify of subscribing: the camera may not reach the
	// consumer address.
	ErrNoNotify = errors.New("onvif: no notification reached the consumer address")
)

// Fault is a SOAP fault returned by the camera.
type Fault struct {
	// Code is the fault code (e.g. "Sender"), Subcode the first subcode
	// (e.g. "NotAuthorized"), both without namespace prefix.
	Code, Subcode string
	// Reason is the human-readable text.
	Reason string
	// HTTPStatus is the status the fault came with.
	HTTPStatus int
}

func (f *Fault) Error() string {
	return fmt.Sprintf("onvif: soap fault %s/%s: %s (http %d)", f.Code, f.Subcode, f.Reason, f.HTTPStatus)
}

// Is makes a NotAuthorized fault match ErrUnauthorized.
func (f *Fault) Is(target error) bool {
	return target == ErrUnauthorized && (f.Subcode == "NotAuthorized" || f.Subcode == "FailedAuthentication")
}
