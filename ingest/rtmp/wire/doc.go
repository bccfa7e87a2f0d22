// Package wire is the byte level of RTMP and FLV that Vigia speaks: the
// handshake, the chunk stream with size limits, AMF0 values, FLV audio and
// video tags (legacy codec ids 7 and 12, and Enhanced RTMP FourCCs) and the
// AVC/HEVC decoder configuration records. It has no camera logic, so the
// RTMP source, the push server and the synthetic RTMP cameras share it.
//
// Every parser here is fed by the network: it returns an error, never
// panics, and allocates in proportion to the bytes actually received, up to
// the limits in Limits.
package wire
