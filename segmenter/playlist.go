package segmenter

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PlaylistSegment is one stored segment as an HLS playlist references it.
type PlaylistSegment struct {
	// URI is the address of the segment file (a signed or presigned URL, or
	// a path relative to the playlist). It must not contain '"', CR or LF.
	URI string

	// StartMs is the wall-clock start of the segment, Unix milliseconds.
	StartMs int64

	// DurationMs is the segment's duration in milliseconds.
	DurationMs int64

	// Size is the byte size of the segment file.
	Size int64

	// InitSize is the byte size of its init part (ftyp+moov), the
	// "init-size" metadata of the stored object.
	InitSize int64
}

// EndMs returns the wall-clock end of the segment, Unix milliseconds.
func (s PlaylistSegment) EndMs() int64 { return s.StartMs + s.DurationMs }

// TouchToleranceMs is how far a segment may start before the end of the
// previous one and still count as touching it rather than overlapping:
// storage keys round start and duration down to the millisecond, so a
// chained segment can seem to start 1 ms early.
const TouchToleranceMs = 2

// playlistVersion is the EXT-X-VERSION the playlists need: 6 for EXT-X-MAP
// in a playlist without I-frames, 7 to be safe with fMP4 in every client.
const playlistVersion = 7

// Playlist builds an HLS VOD media playlist of the segments that overlap
// [fromMs, toMs) (Unix milliseconds), in start order. Each stored segment is
// a standalone fMP4 file: its init part is the EXT-X-MAP (a byte range from
// 0), its media part the segment (a byte range after the init part), and
// EXT-X-PROGRAM-DATE-TIME gives its wall-clock start.
//
// Every segment restarts its media timestamps at zero, so each segment after
// the first is preceded by EXT-X-DISCONTINUITY, as RFC 8216 requires for a
// timestamp reset; players place segments on the playlist timeline by their
// EXTINF durations. A gap in the recording (the next segment does not touch
// the previous one) shows as a jump in EXT-X-PROGRAM-DATE-TIME; playback
// goes on with the next recorded segment.
//
// When fromMs falls inside the first segment, EXT-X-START points at it, so
// players begin at fromMs rather than at the segment's start.
//
// Segments that cannot be referenced (empty or unsafe URI, no duration, an
// init part not strictly inside the file) and segments overlapping an
// earlier one are left out. With no segment left, Playlist returns
// ErrNoSegments.
func Playlist(segs []PlaylistSegment, fromMs, toMs int64) ([]byte, error) {
	if toMs <= fromMs {
		return nil, fmt.Errorf("playlist range %d..%d: %w", fromMs, toMs, ErrInvalidRange)
	}
	sel := selectSegments(segs, fromMs, toMs)
	if len(sel) == 0 {
		return nil, fmt.Errorf("playlist range %d..%d: %w", fromMs, toMs, ErrNoSegments)
	}
	var maxMs int64
	for _, s := range sel {
		maxMs = max(maxMs, s.DurationMs)
	}
	var b strings.Builder
	b.WriteString("#EXTM3U\n")
	b.WriteString("#EXT-X-VERSION:" + strconv.Itoa(playlistVersion) + "\n")
	b.WriteString("#EXT-X-TARGETDURATION:" + strconv.FormatInt(int64(math.Ceil(float64(maxMs)/1000)), 10) + "\n")
	b.WriteString("#EXT-X-MEDIA-SEQUENCE:0\n")
	b.WriteString("#EXT-X-PLAYLIST-TYPE:VOD\n")
	b.WriteString("#EXT-X-INDEPENDENT-SEGMENTS\n")
	if off := fromMs - sel[0].StartMs; off > 0 {
		b.WriteString("#EXT-X-START:TIME-OFFSET=" + formatSeconds(off) + ",PRECISE=YES\n")
	}
	for i, s := range sel {
		if i > 0 {
			b.WriteString("#EXT-X-DISCONTINUITY\n")
		}
		b.WriteString("#EXT-X-MAP:URI=\"" + s.URI + "\",BYTERANGE=\"" + strconv.FormatInt(s.InitSize, 10) + "@0\"\n")
		b.WriteString("#EXT-X-PROGRAM-DATE-TIME:" + time.UnixMilli(s.StartMs).UTC().Format("2006-01-02T15:04:05.000Z") + "\n")
		b.WriteString("#EXTINF:" + formatSeconds(s.DurationMs) + ",\n")
		b.WriteString("#EXT-X-BYTERANGE:" + strconv.FormatInt(s.Size-s.InitSize, 10) + "@" + strconv.FormatInt(s.InitSize, 10) + "\n")
		b.WriteString(s.URI + "\n")
	}
	b.WriteString("#EXT-X-ENDLIST\n")
	return []byte(b.String()), nil
}

// selectSegments returns the usable segments overlapping [fromMs, toMs) in
// start order, without overlaps.
func selectSegments(segs []PlaylistSegment, fromMs, toMs int64) []PlaylistSegment {
	var sel []PlaylistSegment
	for _, s := range segs {
		if !usable(s) || s.EndMs() <= fromMs || s.StartMs >= toMs {
			continue
		}
		sel = append(sel, s)
	}
	sort.SliceStable(sel, func(i, j int) bool { return sel[i].StartMs < sel[j].StartMs })
	out := sel[:0]
	for _, s := range sel {
		if n := len(out); n > 0 && s.StartMs < out[n-1].EndMs()-TouchToleranceMs {
			continue // overlaps the previous segment: a duplicate or a clock step back
		}
		out = append(out, s)
	}
	return out
}

// usable reports whether s can be referenced from a playlist.
func usable(s PlaylistSegment) bool {
	if s.URI == "" || strings.ContainsAny(s.URI, "\"\r\n") || strings.HasPrefix(s.URI, "#") {
		return false
	}
	if s.DurationMs <= 0 || s.StartMs < 0 || s.StartMs > math.MaxInt64/2 || s.DurationMs > math.MaxInt64/4 {
		return false
	}
	return s.InitSize > 0 && s.InitSize < s.Size
}

// formatSeconds writes milliseconds as decimal seconds with three decimals.
func formatSeconds(ms int64) string {
	return strconv.FormatInt(ms/1000, 10) + "." + fmt.Sprintf("%03d", ms%1000)
}
