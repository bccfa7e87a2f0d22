package integrity

import "errors"

// ErrBadManifest is wrapped by errors about a manifest that does not parse.
var ErrBadManifest = errors.New("integrity: bad manifest")

// Errors of Manifest.CheckSignature.
var (
	// ErrUnsigned: the manifest carries no signature.
	ErrUnsigned = errors.New("integrity: manifest not signed")
	// ErrUnknownKey: the manifest is signed by a key the verifier was not
	// given (wrapped, with the key id).
	ErrUnknownKey = errors.New("integrity: manifest signed by an unknown key")
	// ErrBadSignature: the signature does not verify: the manifest changed
	// after it was signed.
	ErrBadSignature = errors.New("integrity: manifest signature does not verify")
)
