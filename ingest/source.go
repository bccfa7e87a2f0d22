// Package ingest holds the contract of camera sources (Source, Sink,
// Camera, the Registry of drivers by URL scheme; the RTSP, RTMP and P2P
// sources are its subpackages), what they share (the clock, parameter
// sets, the dial guard), the supervisor that runs a source with reconnects
// and backoff, and the error classification that decides a camera's
// status.
package ingest

import (
	"context"
	"time"

	"github.com/vigia/vigia/media"
)

// Sink receives what a source produces. Unit must not block: the pipeline
// behind it drops (and counts) rather than stalling the camera connection.
type Sink interface {
	// Tracks starts a run of the source with its tracks. Units that follow
	// refer to tracks by index in this list.
	Tracks(tracks []*media.Track) error

	// Unit delivers one access unit. The sink takes ownership of u; the
	// source must not reuse u's buffers.
	Unit(u *media.Unit)
}

// Source is one connection to one camera.
type Source interface {
	// Run connects, delivers media to sink until the connection fails or
	// ctx ends, and returns why it stopped. Permanent failures are returned
	// as *PermanentError.
	Run(ctx context.Context, sink Sink) error
}

// Passive is implemented by sources that wait for the camera to connect to
// them (an RTMP push) instead of connecting to it: until media comes, such a
// camera is OFFLINE ("waiting for the camera"), not CONECTANDO.
type Passive interface {
	Passive() bool
}

// Camera is what a source needs to know about a camera.
type Camera struct {
	// ID of the camera.
	ID string

	// URL of the stream (credentials included; never log it unredacted).
	URL string

	// Transport is the RTSP transport: "tcp", "udp" or "auto". Empty means
	// the configured default.
	Transport string

	// Sound records the audio track when true.
	Sound bool

	// Trusted cameras come from the operator (static cameras in the config
	// file, synthetic cameras) and may reach private addresses even when
	// ingest.allow_private_networks is off.
	Trusted bool

	// PlanWidth and PlanHeight are the resolution of the camera's plan, zero
	// when unknown; the recorder flags resolution_error when the received
	// picture is larger.
	PlanWidth, PlanHeight int
}

// SourceConfig holds the settings common to all sources.
type SourceConfig struct {
	// ReadTimeout is how long a source waits for data before it gives up on
	// the connection. It defaults to 10 seconds.
	ReadTimeout time.Duration

	// DefaultTransport is used when a camera names none. It defaults to
	// "tcp".
	DefaultTransport string

	// AllowPrivateNetworks lets cameras reach loopback, link-local and
	// private addresses.
	AllowPrivateNetworks bool
}

// Driver builds a source for a camera. Drivers are chosen by URL scheme from
// the registry built in cmd.
type Driver func(cam Camera, cfg SourceConfig) (Source, error)

// Registry maps URL schemes to drivers.
type Registry map[string]Driver
