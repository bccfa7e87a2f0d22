// Package bench measures what recording costs: it serves N synthetic cameras
// from a child process, records them with a Vigia recorder built in this
// process (the same wiring as `vigia recorder`), and reports the recorder's
// CPU and memory per camera, the time from a segment's end to the object
// stored, and the frames lost. In the same window it records a sample of the
// same streams with FFmpeg (`-c copy -f segment`, the way many NVRs record)
// so the CPU figure can be read against a known reference.
//
// CPU is measured in-process with getrusage(RUSAGE_SELF) over a window that
// starts after a warm-up; the synthetic cameras, FFmpeg and MinIO run in
// their own processes, measured from /proc, so they do not count against the
// recorder. The method is Linux-only.
//
// cmd/vigia's `bench` subcommand is a thin wrapper around Run.
package bench
