package logging

import "errors"

// ErrInvalidLevel is returned by New and ParseLevel for a level name that is
// not one of debug, info, warn, error, dpanic, panic or fatal.
var ErrInvalidLevel = errors.New("invalid log level")

// ErrInvalidFormat is returned by New for a format other than "", "json" or
// "console".
var ErrInvalidFormat = errors.New("invalid log format")
