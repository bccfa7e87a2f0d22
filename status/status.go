// Package status defines camera status codes and the status record that the
// recorder publishes for each camera (docs/status.md).
package status

import "time"

// Code is a camera status code, as the service interface exposes it.
type Code int

// Status codes.
const (
	Online     Code = 1 // receiving media
	Offline    Code = 2 // not receiving; retrying (also a new camera)
	Permanent  Code = 3 // retrying will not help without a change
	Connecting Code = 4 // connecting
	Blocked    Code = 5 // owner blocked
)

// Text returns the status text of c, as the service interface shows it.
func (c Code) Text() string {
	switch c {
	case Online:
		return "ONLINE"
	case Offline:
		return "OFFLINE"
	case Permanent:
		return "ERRO PERMANENTE"
	case Connecting:
		return "CONECTANDO"
	case Blocked:
		return "BLOQUEADA"
	}
	return "DESCONHECIDO"
}

// Status is the last known status of one camera.
type Status struct {
	Camera          string    `json:"camera"`
	Code            Code      `json:"code"`
	Text            string    `json:"text"`
	Width           int       `json:"width,omitempty"`
	Height          int       `json:"height,omitempty"`
	ResolutionError bool      `json:"resolution_error"`
	RecordingError  bool      `json:"recording_error"`
	LastError       string    `json:"last_error,omitempty"`
	Node            string    `json:"node,omitempty"`
	Since           time.Time `json:"since"`
	// Recorded is the share of the camera's recent wall-clock time that
	// stored segments cover; nil while the node has not worked it out.
	Recorded *Completeness `json:"recorded,omitempty"`
	// Reason says why the status is not ONLINE, in the words of the gap
	// causes (camera_auth, stream_unsupported, camera_offline, ...);
	// empty while ONLINE and before anything failed.
	Reason Cause `json:"reason,omitempty"`
	// ReasonDetail is the fixed text of the reason ("bad credentials",
	// "unknown stream"), as a gap's Detail; never an error text of the
	// camera.
	ReasonDetail string `json:"reason_detail,omitempty"`
}

// Completeness is the share of wall-clock time covered by stored segments,
// from 0 to 1, over the last hour and the last day (docs/status.md).
type Completeness struct {
	// Hour is the share of the last hour.
	Hour float64 `json:"hour"`
	// Day is the share of the last 24 hours.
	Day float64 `json:"day"`
}
