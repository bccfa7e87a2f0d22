// Package e2e holds Vigia's end-to-end tests: real RTSP cameras (synthetic,
// and FFmpeg publishing through a relay), a real MinIO, an embedded NATS
// server and the vigia binary, with faults injected and the stored
// recordings audited with ffprobe.
package e2e
