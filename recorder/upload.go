package recorder

import (
	"context"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
)

// UploadTimeout bounds one attempt to store a segment; the spool tries
// again after it (segmenter.Spool).
const UploadTimeout = 5 * time.Minute

// Upload is how a node stores a spooled segment: at its key
// (storage.SegmentKey) with its metadata (storage.SegmentMeta) and the
// camera's retention attributes, hashed on the way (integrity.Put),
// checked by its stored size, then added to its hour's manifest.
type Upload struct {
	Store storage.Store
	// Node is the node's id, kept in the segment's metadata.
	Node string
	// LinksFiles says the store links spool files without reading them
	// (the fs store): they are hashed before.
	LinksFiles bool
	// Days gives the retention attributes of a camera's objects.
	Days *Retention
	// Stored adds a stored segment to its hour's manifest
	// (integrity.Recorder.Stored); nil for none.
	Stored func(ctx context.Context, key string, size int64, sum [32]byte)
}

// Segment stores seg, whose bytes body reads; the spool's upload hook.
func (u Upload) Segment(ctx context.Context, seg segmenter.Segment, body io.ReadSeeker) error {
	key := storage.SegmentKey(seg.Camera, seg.Start, seg.Duration, seg.InitSize)
	if key == "" {
		return fmt.Errorf("segment of camera %q has no valid key", seg.Camera)
	}
	md := storage.SegmentMeta{
		Codec: string(seg.Codec), Width: seg.Width, Height: seg.Height, InitSize: seg.InitSize, Frames: seg.Frames,
		Node: u.Node, AudioCodec: string(seg.AudioCodec), Recovered: seg.Recovered,
	}.Metadata()
	var tags map[string]string
	if u.Days != nil {
		var meta map[string]string
		meta, tags = u.Days.Attrs(ctx, seg.Camera)
		maps.Copy(md, meta)
	}
	ctx, cancel := context.WithTimeout(ctx, UploadTimeout)
	defer cancel()
	sum, err := integrity.Put(ctx, u.Store, key, body, seg.Size,
		storage.PutOptions{ContentType: "video/mp4", Metadata: md, Tags: tags, Immutable: true}, u.LinksFiles)
	if err != nil {
		return err
	}
	obj, err := u.Store.Stat(ctx, key)
	if err != nil {
		return fmt.Errorf("verify %s: %w", key, err)
	}
	if obj.Size != seg.Size {
		return fmt.Errorf("verify %s: stored %d bytes, want %d", key, obj.Size, seg.Size)
	}
	if u.Stored != nil {
		u.Stored(ctx, key, seg.Size, sum)
	}
	return nil
}
