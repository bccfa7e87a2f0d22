package onvif

import "time"

// MaxResponseBytes is the largest SOAP response read from a camera; a longer
// one fails with ErrResponseTooLarge.
const MaxResponseBytes = 1 << 20

// DefaultTimeout is the deadline of one request when the Client has none.
const DefaultTimeout = 10 * time.Second

const (
	// maxDepth is the deepest element nesting a parsed document may have.
	maxDepth = 64
	// maxNodes is the most elements a parsed document may have.
	maxNodes = 20000
	// maxTextBytes is the most character data kept per element.
	maxTextBytes = 64 << 10
)
