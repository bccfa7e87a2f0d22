package thumbs

// SnapshotReply is the JSON reply to a snapshot request on
// vigia.snapshot.{camera} (docs/thumbnails.md).
type SnapshotReply struct {
	// Key is the storage key of the JPEG (snap/{camera}/{unixMs}.jpg).
	Key string `json:"key,omitempty"`
	// TsMs is the wall-clock time of the frame, Unix milliseconds.
	TsMs int64 `json:"ts_ms,omitempty"`
	// Width and Height of the image.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Error says why there is no snapshot; empty on success.
	Error string `json:"error,omitempty"`
}
