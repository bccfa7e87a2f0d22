package player

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// playlistSegment is one stored segment as an HLS playlist references it.
type playlistSegment struct {
	// URI is the address of the segment file (a signed or presigned URL, or
	// a path relative to the playlist). It must not contain '"', CR or LF.
	URI string

	// StartMs is the wall-clock start of the segment, Unix milliseconds.
	StartMs int64

	// DurationMs is the segment's duration in milliseconds.
	DurationMs int64

	// Size is the byte size of the segment file.
	Size int64

	// InitSize is the byte size of its init part (ftyp+moov).
	InitSize int64

	// InitURI, when set, is the address of the segment's init part alone,
	// and URI that of its fragments alone (an H.264 rendition, whose
	// sizes are not known when the playlist is written): no byte ranges.
	InitURI string
}

// endMs returns the wall-clock end of the segment, Unix milliseconds.
func (s playlistSegment) endMs() int64 { return s.StartMs + s.DurationMs }

// playlistVersion is the EXT-X-VERSION the playlists need: 6 for EXT-X-MAP
// in a playlist without I-frames, 7 to be safe with fMP4 in every client.
const playlistVersion = 7

// playlistWriter writes an HLS VOD media playlist of the segments that
// overlap [fromMs, toMs) (Unix milliseconds) one segment at a time, so that
// a playlist of any length is never held in memory whole. Each stored
// segment is a standalone fMP4 file: its init part is the EXT-X-MAP (a byte
// range from 0), its media part the segment (a byte range after the init
// part), and EXT-X-PROGRAM-DATE-TIME gives its wall-clock start.
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
// Segments must come in start order. Those that cannot be referenced (empty
// or unsafe URI, no duration, an init part not strictly inside the file),
// lie outside the range, are longer than the target duration, or overlap an
// earlier one are skipped. Nothing is written before the first segment is
// added.
type playlistWriter struct {
	w                      io.Writer
	fromMs, toMs, targetMs int64
	n                      int
	lastEnd                int64
	line                   []byte
}

// newPlaylistWriter returns a writer of the playlist of [fromMs, toMs) to
// w. targetMs, the EXT-X-TARGETDURATION (rounded up to seconds), must be at
// least the longest segment added: when the segments are not known ahead,
// the longest a segment can last (storage.MaxSegmentDuration). A range that
// does not end after it starts wraps catalogue.ErrInvalidRange.
func newPlaylistWriter(w io.Writer, fromMs, toMs, targetMs int64) (*playlistWriter, error) {
	if toMs <= fromMs {
		return nil, fmt.Errorf("%w: playlist from %d to %d", catalogue.ErrInvalidRange, fromMs, toMs)
	}
	return &playlistWriter{w: w, fromMs: fromMs, toMs: toMs, targetMs: targetMs}, nil
}

// add writes s, preceded by the playlist's header when it is the first,
// and reports whether it was written.
func (p *playlistWriter) add(s playlistSegment) (bool, error) {
	if !usable(s) || s.endMs() <= p.fromMs || s.StartMs >= p.toMs || s.DurationMs > p.targetMs {
		return false, nil
	}
	if p.n > 0 && s.StartMs < p.lastEnd-storage.TouchToleranceMs {
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
	if s.InitURI != "" {
		b = append(b, "#EXT-X-MAP:URI=\""+s.InitURI+"\"\n#EXT-X-PROGRAM-DATE-TIME:"...)
		b = time.UnixMilli(s.StartMs).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
		b = append(b, "\n#EXTINF:"+formatSeconds(s.DurationMs)+",\n"...)
	} else {
		b = append(b, "#EXT-X-MAP:URI=\""+s.URI+"\",BYTERANGE=\""...)
		b = strconv.AppendInt(b, s.InitSize, 10)
		b = append(b, "@0\"\n#EXT-X-PROGRAM-DATE-TIME:"...)
		b = time.UnixMilli(s.StartMs).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
		b = append(b, "\n#EXTINF:"+formatSeconds(s.DurationMs)+",\n#EXT-X-BYTERANGE:"...)
		b = strconv.AppendInt(b, s.Size-s.InitSize, 10)
		b = append(b, '@')
		b = strconv.AppendInt(b, s.InitSize, 10)
		b = append(b, '\n')
	}
	b = append(b, s.URI...)
	b = append(b, '\n')
	p.line = b
	if _, err := p.w.Write(b); err != nil {
		return false, err
	}
	p.n++
	p.lastEnd = s.endMs()
	return true, nil
}

// segments returns how many segments were written.
func (p *playlistWriter) segments() int { return p.n }

// close ends the playlist (EXT-X-ENDLIST). With no segment written it
// writes nothing and returns errNoSegments.
func (p *playlistWriter) close() error {
	if p.n == 0 {
		return fmt.Errorf("playlist from %d to %d: %w", p.fromMs, p.toMs, errNoSegments)
	}
	_, err := io.WriteString(p.w, "#EXT-X-ENDLIST\n")
	return err
}

// usable reports whether s can be referenced from a playlist.
func usable(s playlistSegment) bool {
	if s.URI == "" || strings.ContainsAny(s.URI, "\"\r\n") || strings.HasPrefix(s.URI, "#") ||
		strings.ContainsAny(s.InitURI, "\"\r\n") || strings.HasPrefix(s.InitURI, "#") {
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
