package thumbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decodeproc"
	"github.com/vigia/vigia/thumbs/decoder"
)

// Recordings finds and reads a camera's stored segments, for SnapshotAt.
type Recordings struct {
	// Find returns the key and wall-clock start of camera's segment that
	// covers t.
	Find func(ctx context.Context, camera string, t time.Time) (key string, start time.Time, err error)
	// Read returns a whole stored segment.
	Read func(ctx context.Context, key string) ([]byte, error)
}

// SnapshotAt returns camera's picture at t from its recordings, as a JPEG
// at width (0 = full resolution) and quality, with the wall-clock time of
// the frame shown: the last frame starting at or before t. dec decodes it.
func SnapshotAt(ctx context.Context, dec Decoder, rec Recordings, camera string, t time.Time, width, quality int) (jpeg []byte, frameTime time.Time, err error) {
	if dec == nil || !dec.Available() {
		return nil, time.Time{}, ErrUnavailable
	}
	key, start, err := rec.Find(ctx, camera, t)
	if err != nil {
		return nil, time.Time{}, err
	}
	data, err := rec.Read(ctx, key)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read %s: %w", key, err)
	}
	if quality <= 0 || quality > 100 {
		quality = 90
	}
	res, ft, err := frameAt(ctx, dec, data, start, t, decodeproc.JPEG, width, quality)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", key, err)
	}
	return res.JPEG, ft, nil
}

// FrameAt decodes the picture of an fMP4 segment (as the segmenter writes
// it, starting at wall-clock start) shown at t: the segment is decoded
// from the last keyframe at or before t up to the last frame whose
// presentation time is at or before t. width scales it (see
// decoder.ScaledSize). It returns the frame's wall-clock time. dec decodes
// it.
func FrameAt(ctx context.Context, dec Decoder, segment []byte, start, t time.Time, width int) (*image.YCbCr, time.Time, error) {
	res, ft, err := frameAt(ctx, dec, segment, start, t, decodeproc.YCbCr, width, 0)
	if err != nil {
		return nil, time.Time{}, err
	}
	return res.YCbCr, ft, nil
}

// frameAt has the frames of segment up to t decoded, the last picture
// returned in format.
func frameAt(ctx context.Context, dec Decoder, segment []byte, start, t time.Time, format decodeproc.ImageFormat, width, quality int) (*decodeproc.Result, time.Time, error) {
	req, pts, err := frameRequest(segment, start, t)
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Image, req.ImageWidth, req.Quality = format, width, quality
	res, err := dec.Decode(ctx, req)
	switch {
	case errors.Is(err, decoder.ErrNoPicture):
		return nil, time.Time{}, ErrNoFrame
	case err != nil:
		return nil, time.Time{}, err
	case res.Last < 0 || res.Last >= len(pts):
		return nil, time.Time{}, fmt.Errorf("%w: last picture at unit %d of %d", decodeproc.ErrProtocol, res.Last, len(pts))
	}
	return res, start.Add(pts[res.Last]), nil
}

// frameRequest reads segment's video samples from the last keyframe at
// or before t up to the last one shown at or before t, as a request
// (parameter sets from the init segment before the keyframe) and their
// presentation times from start.
func frameRequest(segment []byte, start, t time.Time) (*decodeproc.Request, []time.Duration, error) {
	var init fmp4.Init
	if err := init.Unmarshal(bytes.NewReader(segment)); err != nil {
		return nil, nil, fmt.Errorf("%w: init: %w", ErrBadSegment, err)
	}
	var track *fmp4.InitTrack
	var codec media.Codec
	var params [][]byte
	for _, tr := range init.Tracks {
		switch c := tr.Codec.(type) {
		case *codecs.H264:
			track, codec, params = tr, media.H264, [][]byte{c.SPS, c.PPS}
		case *codecs.H265:
			track, codec, params = tr, media.H265, [][]byte{c.VPS, c.SPS, c.PPS}
		}
		if track != nil {
			break
		}
	}
	if track == nil || track.TimeScale == 0 {
		return nil, nil, fmt.Errorf("%w: no H.264 or H.265 track", ErrBadSegment)
	}
	moof := boxOffset(segment, "moof")
	if moof < 0 {
		return nil, nil, fmt.Errorf("%w: no fragment", ErrBadSegment)
	}
	var parts fmp4.Parts
	if err := parts.Unmarshal(segment[moof:]); err != nil {
		return nil, nil, fmt.Errorf("%w: fragments: %w", ErrBadSegment, err)
	}

	// Samples of the video track up to t, in decoding order.
	type sample struct {
		s   *fmp4.Sample
		pts time.Duration
	}
	target := t.Sub(start)
	scale := int64(track.TimeScale)
	ticks := func(v int64) time.Duration {
		return time.Duration(v/scale)*time.Second + time.Duration(v%scale)*time.Second/time.Duration(scale)
	}
	var run []sample // from the last keyframe at or before t
	for _, p := range parts {
		for _, pt := range p.Tracks {
			if pt.ID != track.ID {
				continue
			}
			dts := int64(pt.BaseTime)
			for _, s := range pt.Samples {
				pts := ticks(dts + int64(s.PTSOffset))
				dts += int64(s.Duration)
				if pts > target {
					continue
				}
				if !s.IsNonSyncSample {
					run = run[:0]
				}
				if len(run) > 0 || !s.IsNonSyncSample {
					run = append(run, sample{s, pts})
				}
			}
		}
	}
	if len(run) == 0 {
		return nil, nil, ErrNoFrame
	}
	req := &decodeproc.Request{Codec: codec, Units: make([][][]byte, 0, len(run))}
	pts := make([]time.Duration, 0, len(run))
	for i, smp := range run {
		nalus, err := smp.s.GetH264()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: sample: %w", ErrBadSegment, err)
		}
		if i == 0 {
			nalus = append(append([][]byte{}, params...), nalus...)
		}
		req.Units = append(req.Units, nalus)
		pts = append(pts, smp.pts)
	}
	return req, pts, nil
}
