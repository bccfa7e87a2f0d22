package retention

import "errors"

// Sentinel errors returned (wrapped) by this package.
var (
	// ErrConfig means a Config is missing a required field.
	ErrConfig = errors.New("retention config")

	// ErrLeaseLost means another node took the sweeper lease during a sweep;
	// the sweep stopped and that node finishes it.
	ErrLeaseLost = errors.New("retention lease lost")
)
