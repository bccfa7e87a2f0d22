package camera

import (
	"errors"
	"fmt"
)

// MaxIDLen is the longest camera id, in bytes.
const MaxIDLen = 64

// ErrInvalidID is returned (wrapped) by ValidID for an id that cannot name
// a camera.
var ErrInvalidID = errors.New("invalid camera id")

// ValidID returns nil when id can name a camera: 1 to MaxIDLen characters
// of A-Z a-z 0-9 _ -. Such an id is one NATS subject token and one KV key,
// one storage key segment that cannot leave its prefix, and one path
// segment of a URL. It is the only camera id rule: the registry, the
// configuration, NATS subjects and storage keys all check ids with it.
// Refusals wrap ErrInvalidID.
func ValidID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidID)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrInvalidID, len(id), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: %q has %q at byte %d (want 1 to %d of A-Z a-z 0-9 _ -)", ErrInvalidID, id, c, i, MaxIDLen)
		}
	}
	return nil
}

// IsAPIID reports whether id lies in the id space of the cameras created
// through the API: decimal digits only. Static and synthetic cameras use
// other ids (the configuration refuses all-digit static ids), so the two
// never share a registry record, a storage prefix, events or retention.
func IsAPIID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}
