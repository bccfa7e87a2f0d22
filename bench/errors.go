package bench

import "errors"

// ErrBadOptions is wrapped by the errors Run returns for invalid Options.
var ErrBadOptions = errors.New("invalid bench options")

// ErrUnsupported is returned where process accounting is not available
// (anything but Linux).
var ErrUnsupported = errors.New("process accounting is only implemented on linux")
