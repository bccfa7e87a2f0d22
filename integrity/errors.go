package integrity

import "errors"

// ErrBadManifest is wrapped by errors about a manifest that does not parse.
var ErrBadManifest = errors.New("integrity: bad manifest")
