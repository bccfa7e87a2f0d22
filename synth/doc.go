// Package synth provides synthetic RTSP cameras for tests and load tests.
//
// A Server serves any number of cameras (paths) from one gortsplib server.
// Each camera loops an embedded fixture clip (H.264 or H.265, optionally with
// AAC audio) on its own continuous timeline, paced in real time by a single
// scheduler goroutine shared by all cameras. Faults (dropped sessions, a
// camera that disappears, stalls, resolution changes, garbage payloads,
// timestamp jumps, a wrong frame rate) can be injected per camera at run time.
//
// The parsed fixture clips are also available to other packages' tests
// through Fixture and AudioFixture.
package synth
