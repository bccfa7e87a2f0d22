package bus

import (
	"strconv"

	"github.com/vigia/vigia/camera"
)

// Key-value bucket names.
const (
	// BucketCameras holds camera configuration, key = camera id.
	BucketCameras = "cameras"
	// BucketCameraStatus holds the last status.Status of each camera, key = camera id.
	BucketCameraStatus = "camera_status"
	// BucketNodes holds recorder node heartbeats, key = node id; entries expire after NodeTTL.
	BucketNodes = "nodes"
	// BucketAssign holds camera → node leases, key = camera id.
	BucketAssign = "assign"
)

// Stream names.
const (
	// StreamEvents holds camera events on vigia.events.{camera}.{type}.
	StreamEvents = "EVENTS"
	// StreamSegments holds stored-segment notices on vigia.segments.{camera}.
	StreamSegments = "SEGMENTS"
	// StreamJobs is the work queue of export (downloadable video) jobs.
	StreamJobs = "JOBS"
	// StreamGaps holds gap records on vigia.gaps.{camera}.
	StreamGaps = "GAPS"
)

// Subjects and subject prefixes.
const (
	// SubjectStatusPrefix prefixes status change subjects: vigia.status.{camera}.
	SubjectStatusPrefix = "vigia.status."
	// SubjectEventsPrefix prefixes event subjects: vigia.events.{camera}.{type}.
	SubjectEventsPrefix = "vigia.events."
	// SubjectSegmentsPrefix prefixes segment notice subjects: vigia.segments.{camera}.
	SubjectSegmentsPrefix = "vigia.segments."
	// SubjectSnapshotPrefix prefixes snapshot request subjects: vigia.snapshot.{camera}.
	SubjectSnapshotPrefix = "vigia.snapshot."
	// SubjectJobsExport is the subject of export jobs (stream JOBS).
	SubjectJobsExport = "vigia.jobs.export"
	// SubjectGapsPrefix prefixes gap record subjects: vigia.gaps.{camera}.
	SubjectGapsPrefix = "vigia.gaps."

	// SubjectEventsAll matches every event subject (stream EVENTS).
	SubjectEventsAll = SubjectEventsPrefix + ">"
	// SubjectSegmentsAll matches every segment notice subject (stream SEGMENTS).
	SubjectSegmentsAll = SubjectSegmentsPrefix + ">"
	// SubjectGapsAll matches every gap record subject (stream GAPS).
	SubjectGapsAll = SubjectGapsPrefix + ">"
	// SubjectStatusAll matches every status change subject.
	SubjectStatusAll = SubjectStatusPrefix + "*"
)

// validCamera checks a camera id before it becomes a subject token or a
// key-value key: camera.ValidID, whose refusals wrap ErrInvalidCamera.
func validCamera(id string) error { return camera.ValidID(id) }

// StatusSubject returns vigia.status.{camera}. camera must pass camera.ValidID.
func StatusSubject(camera string) string {
	return SubjectStatusPrefix + camera
}

// EventSubject returns vigia.events.{camera}.{eventType}, eventType being the
// event type id of the service interface. camera must pass camera.ValidID.
func EventSubject(camera string, eventType int) string {
	return SubjectEventsPrefix + camera + "." + strconv.Itoa(eventType)
}

// SegmentSubject returns vigia.segments.{camera}. camera must pass camera.ValidID.
func SegmentSubject(camera string) string {
	return SubjectSegmentsPrefix + camera
}

// GapSubject returns vigia.gaps.{camera}. camera must pass camera.ValidID.
func GapSubject(camera string) string {
	return SubjectGapsPrefix + camera
}

// SnapshotSubject returns vigia.snapshot.{camera}. camera must pass camera.ValidID.
func SnapshotSubject(camera string) string {
	return SubjectSnapshotPrefix + camera
}

// kvSubject returns the subject a key-value Put on bucket/key publishes to.
func kvSubject(bucket, key string) string {
	return "$KV." + bucket + "." + key
}
