// Package rtmp is Vigia's RTMP ingest: a source that pulls rtmp:// and
// rtmps:// URLs, a push server where cameras publish to
// rtmp://{node}:{port}/live/{camera}?key={key}, and the per-camera key. Both
// turn FLV audio and video (H.264, H.265 as Enhanced RTMP or legacy codec
// id 12, AAC) into the access units the recorder expects. The byte level
// is in the wire subpackage.
package rtmp
