// Package integrity records and checks the SHA-256 of every stored
// recording segment.
//
// Each UTC hour folder of a camera's recordings holds one manifest object,
// rec/{camera}/{YYYY}/{MM}/{DD}/{HH}/manifest.json, listing the segments of
// that hour in the order they were stored, each with its size and SHA-256
// taken from the bytes that were uploaded. The manifests of a camera form a
// chain: each names the previous hour's manifest (key, number of entries it
// had then, and the SHA-256 of its canonical form truncated to those
// entries), so a segment added to an hour later (a spooled segment uploaded
// after a restart) does not break the link, while any change to the entries
// the link covers does.
//
// The package depends only on storage: the recording side calls
// Recorder.Record after each upload; Verify reads the manifests back and
// reports every listed segment whose bytes changed or which is missing.
package integrity
