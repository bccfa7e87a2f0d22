package export

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/storage"
)

// Defaults of Options.
const (
	// DefaultMaxRange is the longest range Build accepts.
	DefaultMaxRange = 24 * time.Hour
	// DefaultMaxSegmentBytes is the largest segment Build reads.
	DefaultMaxSegmentBytes = 1 << 30
)

// gapTolerance is the largest difference between one segment's end and the
// next one's start that is not reported as a gap (keys are in whole ms).
const gapTolerance = 50 * time.Millisecond

// Request is what to export.
type Request struct {
	// Camera is the camera id.
	Camera string
	// Start and End bound the range; End is excluded.
	Start, End time.Time
}

// Options tune Build.
type Options struct {
	// MaxRange is the longest End-Start accepted. It defaults to 24 hours.
	MaxRange time.Duration
	// MaxSegmentBytes bounds the size of one segment (read whole into
	// memory). It defaults to 1 GiB.
	MaxSegmentBytes int64
	// TempDir holds the temporary media file. It defaults to os.TempDir().
	TempDir string
	// Progress, optional, is called after each segment with the bytes of
	// segments read so far and in all.
	Progress func(done, total int64)
	// Catalogue finds the segments. It defaults to one on the store with
	// the default longest segment.
	Catalogue *catalogue.Catalogue
	// H264, when set, is called with each segment read (its init segment
	// and fragments) and returns its H.264 rendition, or nil when the
	// segment is H.264 already; the clip is made of what it returns.
	// Sources still hash the recorded bytes.
	H264 func(segment []byte) ([]byte, error)
}

// Validate checks the request against a maximum range.
func (r Request) Validate(maxRange time.Duration) error {
	if !storage.ValidCameraID(r.Camera) {
		return fmt.Errorf("%w: camera id %q", ErrRange, r.Camera)
	}
	if !r.End.After(r.Start) {
		return fmt.Errorf("%w: end %s is not after start %s", ErrRange, r.End.UTC().Format(time.RFC3339), r.Start.UTC().Format(time.RFC3339))
	}
	if maxRange > 0 && r.End.Sub(r.Start) > maxRange {
		return fmt.Errorf("%w: %s is longer than the maximum of %s", ErrRange, r.End.Sub(r.Start), maxRange)
	}
	return nil
}

// Build reads the camera's segments overlapping the range and remuxes them
// into one progressive MP4: from the keyframe at or before Start (or the
// first recording after Start, when Start falls in a gap) to End. Gaps
// between segments stay in the timeline: the frame before a gap lasts until
// the next recording (the picture holds, the sound is silent). The caller
// must Close the clip.
func Build(ctx context.Context, st storage.Store, req Request, opts Options) (*Clip, error) {
	if opts.MaxRange <= 0 {
		opts.MaxRange = DefaultMaxRange
	}
	if opts.MaxSegmentBytes <= 0 {
		opts.MaxSegmentBytes = DefaultMaxSegmentBytes
	}
	if err := req.Validate(opts.MaxRange); err != nil {
		return nil, err
	}
	if opts.Catalogue == nil {
		opts.Catalogue = catalogue.New(catalogue.Config{Store: st})
	}
	segs, err := FindSegments(ctx, opts.Catalogue, req.Camera, req.Start, req.End)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, noRecordings(req)
	}
	f, err := os.CreateTemp(opts.TempDir, "vigia-export-*.mdat")
	if err != nil {
		return nil, fmt.Errorf("export temp file: %w", err)
	}
	r := &remux{req: req, endNs: req.End.UnixNano(), w: bufio.NewWriterSize(f, 1<<20)}
	clip := &Clip{body: f}
	ok := false
	defer func() {
		if !ok {
			_ = clip.Close()
		}
	}()
	var total, done int64
	for _, s := range segs {
		total += s.Size
	}
	fetch := newFetcher(ctx, st, segs, opts.MaxSegmentBytes)
	defer fetch.stop()
	for i := range segs {
		buf, err := fetch.next()
		if err != nil {
			return nil, err
		}
		clip.Sources = append(clip.Sources, Source{Key: segs[i].Key, Size: int64(len(buf)), SHA256: sha256.Sum256(buf)})
		seg := buf
		if opts.H264 != nil {
			h, err := opts.H264(buf)
			if err != nil {
				return nil, fmt.Errorf("segment %s in H.264: %w", segs[i].Key, err)
			}
			if h != nil {
				seg = h
				clip.Transcoded++
			}
		}
		if err := r.segment(segs[i], seg); err != nil {
			return nil, fmt.Errorf("segment %s: %w", segs[i].Key, err)
		}
		fetch.release(buf)
		done += segs[i].Size
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	if r.video == nil || r.video.n() == 0 {
		return nil, noRecordings(req)
	}
	if err := r.w.Flush(); err != nil {
		return nil, fmt.Errorf("export temp file: %w", err)
	}
	tracks := []*outTrack{r.video}
	r.video.endAt(ticksOf(r.endNs-r.originNs, r.video.timescale))
	if r.audio != nil && r.audio.n() > 0 {
		r.audio.endAt(ticksOf(r.endNs-r.originNs, r.audio.timescale))
		tracks = append(tracks, r.audio)
		clip.AudioFrames = r.audio.n()
	}
	head := header(tracks, r.pos, false)
	if needCo64(len(head), r.pos) {
		head = header(tracks, r.pos, true)
	}
	clip.head, clip.bsize = head, r.pos
	clip.Start = time.Unix(0, r.originNs)
	clip.End = clip.Start.Add(durationOf(r.video.cursor, r.video.timescale))
	clip.Segments = r.segments
	clip.Gaps = r.gaps
	clip.VideoFrames = r.video.n()
	clip.Keyframe = r.keyframe
	ok = true
	return clip, nil
}

func noRecordings(req Request) error {
	return fmt.Errorf("%w: camera %s has no recordings between %s and %s", ErrNoRecordings, req.Camera,
		req.Start.UTC().Format(time.RFC3339), req.End.UTC().Format(time.RFC3339))
}

// remux is the state of one Build.
type remux struct {
	req      Request
	endNs    int64
	originNs int64
	started  bool

	video, audio *outTrack
	w            *bufio.Writer
	pos          int64

	segments int
	prevEnd  time.Time
	gaps     []Gap
	keyframe *Keyframe
}

// segment adds the samples of one segment that fall in the range.
func (r *remux) segment(ref SegmentRef, buf []byte) error {
	moov, fragOff, err := splitInit(buf)
	if err != nil {
		return err
	}
	tracks, err := parseMoov(moov)
	if err != nil {
		return err
	}
	var vt, at *initTrack
	for i := range tracks {
		switch {
		case tracks[i].handler == "vide" && vt == nil:
			vt = &tracks[i]
		case tracks[i].handler == "soun" && at == nil:
			at = &tracks[i]
		}
	}
	if vt == nil {
		return fmt.Errorf("%w: no video track", ErrBadSegment)
	}
	var parts fmp4.Parts
	if err := parts.Unmarshal(buf[fragOff:]); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSegment, err)
	}
	segNs := ref.Start.UnixNano()
	if !r.started {
		if !r.chooseOrigin(parts, vt, segNs) {
			return nil // no keyframe before End in this segment
		}
		if err := r.takeKeyframe(buf[:fragOff], vt, parts, segNs); err != nil {
			return err
		}
	} else if ref.Start.Sub(r.prevEnd) > gapTolerance {
		r.gaps = append(r.gaps, Gap{From: r.prevEnd, To: ref.Start})
	}
	r.segments++
	r.prevEnd = ref.End()
	if r.video == nil {
		r.video = newOutTrack(true, vt.timescale)
		r.video.width, r.video.height = vt.width, vt.height
	}
	vsdi := r.video.entryIndex(vt.entry)
	var asdi uint32
	if at != nil {
		if r.audio == nil {
			r.audio = newOutTrack(false, at.timescale)
		}
		asdi = r.audio.entryIndex(at.entry)
	}
	for _, p := range parts {
		for _, pt := range p.Tracks {
			switch {
			case uint32(pt.ID) == vt.id:
				if err := r.run(r.video, vsdi, vt.timescale, segNs, pt); err != nil {
					return err
				}
			case at != nil && uint32(pt.ID) == at.id:
				if err := r.run(r.audio, asdi, at.timescale, segNs, pt); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// chooseOrigin finds the keyframe at or before the requested start (or the
// first keyframe) and makes it the clip's time zero.
func (r *remux) chooseOrigin(parts fmp4.Parts, vt *initTrack, segNs int64) bool {
	startNs := r.req.Start.UnixNano()
	best, found := int64(0), false
	for _, p := range parts {
		for _, pt := range p.Tracks {
			if uint32(pt.ID) != vt.id {
				continue
			}
			dts := int64(pt.BaseTime)
			for _, s := range pt.Samples {
				wall := segNs + nsOf(dts, vt.timescale)
				if !s.IsNonSyncSample && wall < r.endNs && (!found || wall <= startNs) {
					best, found = wall, true
				}
				dts += int64(s.Duration)
			}
		}
	}
	if found {
		r.originNs, r.started = best, true
	}
	return found
}

// run adds the samples of one track run that fall in [origin, end).
func (r *remux) run(t *outTrack, sdi, inScale uint32, segNs int64, pt *fmp4.PartTrack) error {
	dts := int64(pt.BaseTime)
	first, count := -1, 0
	var size int64
	for i, s := range pt.Samples {
		wall := segNs + nsOf(dts, inScale)
		dts += int64(s.Duration)
		if wall < r.originNs || wall >= r.endNs {
			continue
		}
		if t.video && t.n() == 0 && s.IsNonSyncSample {
			continue // a clip starts with a keyframe
		}
		if first < 0 {
			first = i
		}
		ideal := ticksOf(wall-r.originNs, t.timescale)
		dur := rescale(int64(s.Duration), inScale, t.timescale)
		cto := int32(rescale(int64(s.PTSOffset), inScale, t.timescale))
		t.add(ideal, uint32(max(dur, 1)), uint32(len(s.Payload)), !s.IsNonSyncSample, cto)
		if _, err := r.w.Write(s.Payload); err != nil {
			return fmt.Errorf("export temp file: %w", err)
		}
		count++
		size += int64(len(s.Payload))
	}
	if count > 0 {
		t.addChunk(r.pos, uint32(count), size, sdi)
		r.pos += size
	}
	return nil
}

// takeKeyframe keeps the clip's first keyframe for the thumbnail.
func (r *remux) takeKeyframe(init []byte, vt *initTrack, parts fmp4.Parts, segNs int64) error {
	var in fmp4.Init
	if err := in.Unmarshal(bytes.NewReader(init)); err != nil {
		return fmt.Errorf("%w: init: %w", ErrBadSegment, err)
	}
	kf := &Keyframe{Width: int(vt.width), Height: int(vt.height)}
	for _, it := range in.Tracks {
		if uint32(it.ID) != vt.id {
			continue
		}
		switch c := it.Codec.(type) {
		case *codecs.H264:
			kf.Codec, kf.SPS, kf.PPS = media.H264, c.SPS, c.PPS
		case *codecs.H265:
			kf.Codec, kf.VPS, kf.SPS, kf.PPS = media.H265, c.VPS, c.SPS, c.PPS
		}
	}
	for _, p := range parts {
		for _, pt := range p.Tracks {
			if uint32(pt.ID) != vt.id {
				continue
			}
			dts := int64(pt.BaseTime)
			for _, s := range pt.Samples {
				if segNs+nsOf(dts, vt.timescale) == r.originNs && !s.IsNonSyncSample && kf.NALUs == nil {
					kf.NALUs = splitAVCC(s.Payload)
				}
				dts += int64(s.Duration)
			}
		}
	}
	r.keyframe = kf
	return nil
}

// splitAVCC splits a sample of 4-byte length-prefixed NAL units.
func splitAVCC(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n > len(b) {
			break
		}
		out = append(out, bytes.Clone(b[:n]))
		b = b[n:]
	}
	return out
}

// nsOf converts ticks of a clock to nanoseconds without overflow.
func nsOf(ticks int64, scale uint32) int64 {
	s := int64(scale)
	return ticks/s*int64(time.Second) + ticks%s*int64(time.Second)/s
}

// ticksOf converts nanoseconds to ticks of a clock without overflow.
func ticksOf(ns int64, scale uint32) int64 {
	s := int64(scale)
	return ns/int64(time.Second)*s + ns%int64(time.Second)*s/int64(time.Second)
}

func durationOf(ticks int64, scale uint32) time.Duration { return time.Duration(nsOf(ticks, scale)) }

// rescale converts v ticks of one clock to another.
func rescale(v int64, from, to uint32) int64 {
	if from == to {
		return v
	}
	return v * int64(to) / int64(from)
}

// fetcher reads segments one ahead of the remux.
type fetcher struct {
	out    chan fetched
	free   chan []byte
	cancel context.CancelFunc
	done   chan struct{}
}

type fetched struct {
	buf []byte
	err error
}

func newFetcher(ctx context.Context, st storage.Store, segs []SegmentRef, maxBytes int64) *fetcher {
	ctx, cancel := context.WithCancel(ctx)
	f := &fetcher{out: make(chan fetched, 1), free: make(chan []byte, 2), cancel: cancel, done: make(chan struct{})}
	f.free <- nil
	f.free <- nil
	go func() {
		defer close(f.done)
		defer close(f.out)
		for _, s := range segs {
			var buf []byte
			select {
			case buf = <-f.free:
			case <-ctx.Done():
				return
			}
			buf, err := readSegment(ctx, st, s, maxBytes, buf)
			select {
			case f.out <- fetched{buf, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return f
}

func (f *fetcher) next() ([]byte, error) {
	r, ok := <-f.out
	if !ok {
		return nil, fmt.Errorf("read segments: %w", context.Canceled)
	}
	return r.buf, r.err
}

func (f *fetcher) release(buf []byte) { f.free <- buf }

func (f *fetcher) stop() {
	f.cancel()
	<-f.done
}

// readSegment reads a whole segment into buf (reused when large enough).
func readSegment(ctx context.Context, st storage.Store, s SegmentRef, maxBytes int64, buf []byte) ([]byte, error) {
	if s.Size > maxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrBadSegment, s.Key, s.Size, maxBytes)
	}
	rc, err := st.Get(ctx, s.Key, 0, -1)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Key, err)
	}
	defer rc.Close()
	if int64(cap(buf)) < s.Size {
		buf = make([]byte, s.Size)
	}
	buf = buf[:s.Size]
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Key, err)
	}
	return buf, nil
}
