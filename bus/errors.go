package bus

import (
	"errors"

	"github.com/vigia/vigia/camera"
)

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrInvalidOptions means Options failed validation; the message names the field.
	ErrInvalidOptions = errors.New("invalid bus options")

	// ErrEmbedded means the embedded nats-server could not be started.
	ErrEmbedded = errors.New("embedded nats server")

	// ErrConnect means the first connection to NATS could not be made.
	ErrConnect = errors.New("nats connect failed")

	// ErrTopology means a stream or bucket could not be created or updated.
	ErrTopology = errors.New("nats topology")

	// ErrNotConnected means NATS is unreachable right now (the connection is
	// reconnecting); the call was not attempted. Callers that must not lose the
	// message queue it in an Outbox.
	ErrNotConnected = errors.New("nats not connected")

	// ErrClosed means the Bus or Outbox has been closed.
	ErrClosed = errors.New("bus closed")

	// ErrInvalidCamera means a camera id fails the camera id rule
	// (camera.ValidID); it is camera.ErrInvalidID.
	ErrInvalidCamera = camera.ErrInvalidID

	// ErrInvalidMessage means a message to publish is missing a required field.
	ErrInvalidMessage = errors.New("invalid message")

	// ErrKeyNotFound means a key-value key does not exist (or was deleted).
	ErrKeyNotFound = errors.New("key not found")

	// ErrRevision means a key-value create or update lost a compare-and-set:
	// the key exists already, or changed since the revision given.
	ErrRevision = errors.New("key-value revision mismatch")
)
