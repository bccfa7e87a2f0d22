// Package decodeproc decodes camera video in child processes, so that a
// decoder crash or a runaway allocation on a malformed bitstream costs a
// request, never the recorder.
//
// A Pool runs a few decoder processes (`vigia decode`, started from the
// running binary; see Main) and sends each one request at a time over its
// standard input: access units in, a JPEG, a raw YCbCr picture or
// downscaled luma planes out, over its standard output. A process that
// crashes, breaks the protocol or misses a request's deadline is killed
// (its whole process group), counted by reason and started again at the
// next request; the request fails with ErrProcess.
//
// The protocol (frame.go, request.go, result.go) is length-prefixed and
// versioned, with every size bounded (limits.go). Its parsers never panic,
// allocate in proportion to the bytes received, and are fuzzed on both
// sides: the child parses requests, the parent parses results.
//
// A decoder process runs with an empty environment, in its own process
// group, with the descriptors it inherited past standard error closed,
// RLIMIT_DATA set to the pool's memory limit, no core dumps,
// PR_SET_NO_NEW_PRIVS and, on Linux amd64 and arm64, a seccomp filter that
// refuses network, exec, file opening and debugging system calls
// (sandbox_linux.go).
//
// Without cgo the package builds, but Available reports false and Decode
// returns decoder.ErrUnavailable: the binary has no decoder.
package decodeproc
