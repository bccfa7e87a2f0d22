package export

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/vigia/vigia/storage"
)

// Job states (spec 3.2).
const (
	// StatusMaking is a job queued or running.
	StatusMaking = 0
	// StatusDone is a finished job whose file is stored.
	StatusDone = 1
	// StatusFailed is a job that ended without a file; State.Reason says why.
	StatusFailed = 2
)

// Job is the message on vigia.jobs.export.
type Job struct {
	// ID is the job id chosen by the API (its database row id).
	ID int64 `json:"id"`
	// Camera is the camera id.
	Camera string `json:"camera"`
	// StartMs and EndMs bound the range, Unix milliseconds.
	StartMs int64 `json:"start_ms"`
	EndMs   int64 `json:"end_ms"`
	// Description is the user's text.
	Description string `json:"description,omitempty"`
	// Codec is the video codec asked for: "" keeps the recordings' own
	// (H.264 or H.265, never transcoded), CodecH264 has H.265 recordings
	// transcoded to H.264.
	Codec string `json:"codec,omitempty"`
}

// CodecH264 is Job.Codec for a video in H.264 whatever the recordings'
// codec.
const CodecH264 = "h264"

// Request returns the job's range as a Request.
func (j Job) Request() Request {
	return Request{Camera: j.Camera, Start: time.UnixMilli(j.StartMs), End: time.UnixMilli(j.EndMs)}
}

// State is a job's record in the KV bucket "exports" (key = decimal id).
type State struct {
	Job
	// Status is StatusMaking, StatusDone or StatusFailed.
	Status int `json:"status"`
	// Progress is the percent done (100 when done).
	Progress int `json:"progress"`
	// Reason says why a job failed (or why it is being retried).
	Reason string `json:"reason,omitempty"`
	// Key is the storage key of the video, VideoKey(ID).
	Key string `json:"key"`
	// ThumbKey is the storage key of the thumbnail; empty without one.
	ThumbKey string `json:"thumb_key,omitempty"`
	// ManifestKey is the storage key of the video's signed manifest
	// (ManifestKey; its signature at SignatureKey); empty without one.
	ManifestKey string `json:"manifest_key,omitempty"`
	// Size of the file in bytes; FileStartMs the time of its first frame;
	// DurationMs its length (gaps included); Gaps the number of gaps.
	Size        int64 `json:"size,omitempty"`
	FileStartMs int64 `json:"file_start_ms,omitempty"`
	DurationMs  int64 `json:"duration_ms,omitempty"`
	Gaps        int   `json:"gaps,omitempty"`
	// Node is the node that ran the job last.
	Node string `json:"node,omitempty"`
	// Created and Updated are when the job was submitted and last changed.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// VideoKey returns the storage key of job id's video: videos/{id}.mp4.
func VideoKey(id int64) string { return storage.VideoKey(strconv.FormatInt(id, 10)) }

// ThumbKey returns the storage key of job id's thumbnail: videos/{id}.jpg.
func ThumbKey(id int64) string {
	if id < 0 {
		return ""
	}
	return storage.PrefixVideos + strconv.FormatInt(id, 10) + ".jpg"
}

// stateKey returns the KV key of job id.
func stateKey(id int64) string { return strconv.FormatInt(id, 10) }

// DecodeJob parses and checks a job message.
func DecodeJob(data []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return Job{}, fmt.Errorf("%w: %w", ErrInvalidJob, err)
	}
	if j.ID < 0 || !storage.ValidCameraID(j.Camera) {
		return j, fmt.Errorf("%w: id %d camera %q", ErrInvalidJob, j.ID, j.Camera)
	}
	if j.Codec != "" && j.Codec != CodecH264 {
		return j, fmt.Errorf("%w: codec %q (want %q or none)", ErrInvalidJob, j.Codec, CodecH264)
	}
	return j, nil
}
