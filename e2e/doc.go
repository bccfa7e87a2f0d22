// Package e2e holds Vigia's end-to-end tests: real RTSP cameras (synthetic,
// FFmpeg publishing through a relay, and GStreamer's RTSP server), a real
// MinIO, an embedded NATS server and the vigia binary, with faults injected
// and the stored recordings audited with ffprobe.
package e2e
