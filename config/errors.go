package config

import (
	"errors"
	"fmt"
)

// ErrUnknownKey is returned for a key in the YAML file that is not a
// configuration key. The error names the full key path and line.
var ErrUnknownKey = errors.New("unknown key")

// ErrDuplicateKey is returned for a key written twice in one YAML mapping.
var ErrDuplicateKey = errors.New("duplicate key")

// ErrInvalidDuration is returned for text that is not a Go duration such as
// "60s" or "1m30s".
var ErrInvalidDuration = errors.New("invalid duration")

// ErrInvalidSize is returned for text that is not a size such as "2GiB",
// "10MB" or "1048576".
var ErrInvalidSize = errors.New("invalid size")

// ErrInvalidValue is returned for a value of the wrong type or outside the
// values a key accepts.
var ErrInvalidValue = errors.New("invalid value")

// ErrRequired is returned by Validate for a key that must be set.
var ErrRequired = errors.New("required")

// ErrWrongShape is returned when the YAML file has a mapping, list or scalar
// where the key needs something else.
var ErrWrongShape = errors.New("wrong shape")

// KeyError is a problem with the value of one key. It wraps one of the
// sentinel errors of this package.
type KeyError struct {
	Key    string // full key path, such as "recording.segment_duration" or "cameras[2].url"
	Source string // where the value came from: "", "line 7", "env VIGIA_X", "flag --x"
	Err    error
}

// Error returns "config: KEY: PROBLEM (SOURCE)".
func (e *KeyError) Error() string {
	if e.Source == "" {
		return fmt.Sprintf("config: %s: %v", e.Key, e.Err)
	}
	return fmt.Sprintf("config: %s: %v (%s)", e.Key, e.Err, e.Source)
}

// Unwrap returns the underlying problem.
func (e *KeyError) Unwrap() error { return e.Err }
