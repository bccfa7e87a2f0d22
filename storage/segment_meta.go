package storage

import "strconv"

// Metadata names a recording segment is stored with (SegmentMeta).
const (
	// MetaCodec is the segment's video codec (h264, h265).
	MetaCodec = "codec"
	// MetaWidth and MetaHeight are its picture's size in pixels.
	MetaWidth  = "width"
	MetaHeight = "height"
	// MetaInitSize is the size of its init section (ftyp+moov), in bytes.
	MetaInitSize = "init-size"
	// MetaFrames is how many video frames it holds.
	MetaFrames = "frames"
	// MetaNode is the node that recorded it.
	MetaNode = "node"
	// MetaAudioCodec is its audio track's codec, absent without one.
	MetaAudioCodec = "audio-codec"
	// MetaRecovered is "1" on a segment recovered from the spool after a
	// crash, absent otherwise.
	MetaRecovered = "recovered"
)

// SegmentMeta is what a recording segment's metadata says of it.
type SegmentMeta struct {
	Codec         string
	Width, Height int
	InitSize      int64
	Frames        int
	Node          string
	AudioCodec    string // "" without audio
	Recovered     bool
}

// Metadata returns m as the object's metadata (PutOptions.Metadata), under
// the Meta names above.
func (m SegmentMeta) Metadata() map[string]string {
	md := map[string]string{
		MetaCodec:    m.Codec,
		MetaWidth:    strconv.Itoa(m.Width),
		MetaHeight:   strconv.Itoa(m.Height),
		MetaInitSize: strconv.FormatInt(m.InitSize, 10),
		MetaFrames:   strconv.Itoa(m.Frames),
		MetaNode:     m.Node,
	}
	if m.AudioCodec != "" {
		md[MetaAudioCodec] = m.AudioCodec
	}
	if m.Recovered {
		md[MetaRecovered] = "1"
	}
	return md
}
