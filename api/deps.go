package api

import (
	"context"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// Registry is the NATS camera registry (bucket "cameras"); *bus.Bus
// implements it.
type Registry interface {
	// PutCamera writes the camera's record.
	PutCamera(ctx context.Context, c camera.Config) error
	// DeleteCamera removes the camera's record; a missing one is not an error.
	DeleteCamera(ctx context.Context, id string) error
	// GetCamera reads the camera's record; ok is false when there is none.
	GetCamera(ctx context.Context, id string) (c camera.Config, ok bool, err error)
	// ListCameras reads every record; records that cannot be read are
	// left out and reported in the error, alongside the others.
	ListCameras(ctx context.Context) ([]camera.Config, error)
}

// StatusReader reads the last status of a camera (bucket "camera_status");
// *bus.Bus implements it.
type StatusReader interface {
	// GetStatus returns the camera's last status; ok is false when none.
	GetStatus(ctx context.Context, camera string) (s status.Status, ok bool, err error)
}

// LiveURLs gives the live stream address of a camera and the address of the
// node serving it.
type LiveURLs interface {
	// LiveURLs returns the player URL of the camera's live stream (HLS when
	// hls is true), valid until exp, and the base URL of the server
	// recording it. Both are empty when the camera is not being recorded
	// anywhere.
	LiveURLs(ctx context.Context, camera string, hls bool, exp time.Time) (liveURL, serverURL string, err error)
}

// Snapshotter takes a snapshot now, on the node recording the camera.
type Snapshotter interface {
	// TakeSnapshot returns the storage key of the snapshot taken.
	TakeSnapshot(ctx context.Context, camera string) (key string, err error)
}

// SnapshotFinder finds the image of a camera at an exact time.
type SnapshotFinder interface {
	// SnapshotAt returns the storage key of the camera's image at ts, or
	// "" when there is none.
	SnapshotAt(ctx context.Context, camera string, ts time.Time) (key string, err error)
}

// Job is a downloadable video to make.
type Job struct {
	// ID is the video id (decimal); the video is stored at
	// storage.VideoKey(ID).
	ID string `json:"id"`
	// Camera is the camera id.
	Camera string `json:"camera"`
	// StartMs and EndMs bound the video, Unix milliseconds.
	StartMs int64 `json:"start_ms"`
	EndMs   int64 `json:"end_ms"`
	// Description is the user's text.
	Description string `json:"description"`
	// Codec is "h264" for a video in H.264 whatever the recordings'
	// codec (H.265 transcoded), "" for the recordings as they are.
	Codec string `json:"codec,omitempty"`
}

// JobState is the state of a downloadable video job.
type JobState struct {
	// Status is 0 (under creation), 1 (ready) or 2 (failed), as in spec 3.2.
	Status int
	// Key is the storage key of the video when Status is 1 ("" means
	// storage.VideoKey of the job id).
	Key string
	// Reason says why the job failed when Status is 2.
	Reason string
}

// Exporter runs downloadable video jobs.
type Exporter interface {
	// Submit queues the job.
	Submit(ctx context.Context, j Job) error
	// State returns the job's state.
	State(ctx context.Context, id string) (JobState, error)
	// Remove forgets the job and deletes what it stored (video,
	// thumbnail, manifest and signature).
	Remove(ctx context.Context, id string) error
}
