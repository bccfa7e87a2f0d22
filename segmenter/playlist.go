package segmenter

import (
	"fmt"
	"io"
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
	pw, err := NewPlaylistWriter(&b, fromMs, toMs, maxMs)
	if err != nil {
		return nil, err
	}
	for _, s := range sel {
		if _, err := pw.Add(s); err != nil {
			return nil, err
		}
	}
	if err := pw.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// PlaylistWriter writes the playlist of Playlist one segment at a time, so
// that a playlist of any length is never held in memory whole. Segments
// must come in start order; those Playlist leaves out are skipped. Nothing
// is written before the first segment is added.
type PlaylistWriter struct {
	w                      io.Writer
	fromMs, toMs, targetMs int64
	n                      int
	lastEnd                int64
	line                   []byte
}

// NewPlaylistWriter returns a writer of the playlist of [fromMs, toMs) to
// w. targetMs, the EXT-X-TARGETDURATION (rounded up to seconds), must be at
// least the longest segment added: when the segments are not known ahead,
// the longest a segment can last (MaxSegmentDuration).
func NewPlaylistWriter(w io.Writer, fromMs, toMs, targetMs int64) (*PlaylistWriter, error) {
	if toMs <= fromMs {
		return nil, fmt.Errorf("playlist range %d..%d: %w", fromMs, toMs, ErrInvalidRange)
	}
	return &PlaylistWriter{w: w, fromMs: fromMs, toMs: toMs, targetMs: targetMs}, nil
}

// Add writes s, preceded by the playlist's header when it is the first,
// and reports whether it was written: a segment that cannot be referenced,
// lies outside the range, is longer than the target, or overlaps the one
// before is skipped.
func (p *PlaylistWriter) Add(s PlaylistSegment) (bool, error) {
	if !usable(s) || s.EndMs() <= p.fromMs || s.StartMs >= p.toMs || s.DurationMs > p.targetMs {
		return false, nil
	}
	if p.n > 0 && s.StartMs < p.lastEnd-TouchToleranceMs {
		return false, nil // overlaps the previous segment: a duplicate or a clock step back
	}
	b := p.line[:0]
	if p.n == 0 {
		b = append(b, "#EXTM3U\n#EXT-X-VERSION:"...)
		b = strconv.AppendInt(b, playlistVersion, 10)
		b = append(b, "\n#EXT-X-TARGETDURATION:"...)
		b = strconv.AppendInt(b, int64(math.Ceil(float64(p.targetMs)/1000)), 10)
		b = append(b, "\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n"...)
		if off := p.fromMs - s.StartMs; off > 0 {
			b = append(b, "#EXT-X-START:TIME-OFFSET="+formatSeconds(off)+",PRECISE=YES\n"...)
		}
	} else {
		b = append(b, "#EXT-X-DISCONTINUITY\n"...)
	}
	b = append(b, "#EXT-X-MAP:URI=\""+s.URI+"\",BYTERANGE=\""...)
	b = strconv.AppendInt(b, s.InitSize, 10)
	b = append(b, "@0\"\n#EXT-X-PROGRAM-DATE-TIME:"...)
	b = time.UnixMilli(s.StartMs).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, "\n#EXTINF:"+formatSeconds(s.DurationMs)+",\n#EXT-X-BYTERANGE:"...)
	b = strconv.AppendInt(b, s.Size-s.InitSize, 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, s.InitSize, 10)
	b = append(b, '\n')
	b = append(b, s.URI...)
	b = append(b, '\n')
	p.line = b
	if _, err := p.w.Write(b); err != nil {
		return false, err
	}
	p.n++
	p.lastEnd = s.EndMs()
	return true, nil
}

// Segments returns how many segments were written.
func (p *PlaylistWriter) Segments() int { return p.n }

// Close ends the playlist (EXT-X-ENDLIST). With no segment written it
// writes nothing and returns ErrNoSegments.
func (p *PlaylistWriter) Close() error {
	if p.n == 0 {
		return fmt.Errorf("playlist range %d..%d: %w", p.fromMs, p.toMs, ErrNoSegments)
	}
	_, err := io.WriteString(p.w, "#EXT-X-ENDLIST\n")
	return err
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
