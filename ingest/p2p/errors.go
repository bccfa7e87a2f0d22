package p2p

import "errors"

// Errors of the P2P driver.
var (
	// ErrNoResolver is returned when p2p.resolver is not configured.
	ErrNoResolver = errors.New("p2p.resolver is not configured")

	// ErrBadSerial is a serial number that is not 1 to 64 of A-Z a-z 0-9 . _ -.
	ErrBadSerial = errors.New("invalid p2p serial number")

	// ErrLookup is a lookup answer that does not hold a usable URL.
	ErrLookup = errors.New("p2p lookup failed")
)
