// Package camera defines the camera record that the API writes to the NATS
// KV bucket "cameras" and recorder nodes watch: what to record and how to
// reach it. Credentials travel sealed (AES-GCM under a key derived from the
// cluster's shared secret), so NATS payloads never carry a camera password.
package camera

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Connection types of the service interface (spec 2.3).
const (
	RTSP = 0
	RTMP = 1
	P2P  = 2
)

// Config is one camera's record in the "cameras" bucket (key = ID).
type Config struct {
	// ID is the camera id (decimal for cameras created through the API).
	ID string `json:"id"`

	// ClientID owns the camera.
	ClientID int64 `json:"client_id"`

	// ConnectionType is RTSP, RTMP or P2P.
	ConnectionType int `json:"connection_type"`

	// SealedURL is the source URL (RTSP or RTMP pull), sealed with Seal.
	// Empty for RTMP push and P2P cameras.
	SealedURL string `json:"sealed_url,omitempty"`

	// Transport is the RTSP transport (tcp, udp, auto), empty for the default.
	Transport string `json:"transport,omitempty"`

	// Stream is 0 (main) or 1 (secondary), for P2P cameras and URL templates.
	Stream string `json:"stream,omitempty"`

	// P2PSerial is the P2P serial number; P2PSealedPassword its sealed password.
	P2PSerial         string `json:"p2p_serial,omitempty"`
	P2PSealedPassword string `json:"p2p_sealed_password,omitempty"`

	// Sound records the camera's audio (as AAC) when true.
	Sound bool `json:"sound"`

	// HistoryDays is how long the camera's recordings are kept.
	HistoryDays int `json:"history_days"`

	// Width and Height are the plan's resolution; zero when unknown. The
	// recorder sets resolution_error when the received size does not fit.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`

	// Blocked cameras are not recorded (status BLOQUEADA).
	Blocked bool `json:"blocked,omitempty"`

	// Trusted is set for cameras of the operator's own configuration
	// (static and synthetic cameras), which may reach private addresses.
	// The API never sets it.
	Trusted bool `json:"trusted,omitempty"`

	// PushKeyGen is the generation of an RTMP push camera's stream key
	// (PushKeyGen), counted up by each rotation; 0 before any.
	PushKeyGen int `json:"push_key_gen,omitempty"`
}

// ErrInvalid is returned for a record that cannot be recorded.
var ErrInvalid = errors.New("invalid camera record")

// Validate checks the record's shape.
func (c Config) Validate() error {
	if err := ValidID(c.ID); err != nil {
		return errors.Join(ErrInvalid, err)
	}
	switch c.ConnectionType {
	case RTSP:
		if c.SealedURL == "" {
			return errors.Join(ErrInvalid, errors.New("rtsp camera without url"))
		}
	case RTMP:
	case P2P:
		if c.P2PSerial == "" {
			return errors.Join(ErrInvalid, errors.New("p2p camera without serial number"))
		}
	default:
		return errors.Join(ErrInvalid, errors.New("unknown connection type"))
	}
	if c.HistoryDays < 0 {
		return errors.Join(ErrInvalid, errors.New("negative history_days"))
	}
	return nil
}

// Decode reads the record stored under key in the "cameras" bucket: its
// JSON, which must pass Validate and carry key as its ID. It is the one
// decoder of registry records; refusals wrap ErrInvalid.
func Decode(key string, data []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("%w %q: %w", ErrInvalid, key, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("camera %q: %w", key, err)
	}
	if c.ID != key {
		return Config{}, fmt.Errorf("%w %q: id %q is not its key", ErrInvalid, key, c.ID)
	}
	return c, nil
}
