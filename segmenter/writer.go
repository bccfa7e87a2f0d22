package segmenter

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4/seekablebuffer"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"
	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
)

// WriterConfig configures a Writer.
type WriterConfig struct {
	// Camera id.
	Camera string

	// SegmentDuration is the target duration; a segment is cut at the first
	// keyframe after it. It defaults to 60 seconds.
	SegmentDuration time.Duration

	// FragmentDuration is the target duration of one moof+mdat fragment.
	// It defaults to 1 second.
	FragmentDuration time.Duration

	// MaxJump is the largest DTS step between consecutive video frames that
	// is not a discontinuity. It defaults to 5 seconds.
	MaxJump time.Duration

	// Spool receives the segment files.
	Spool *Spool

	// NotBefore is the end of the camera's last segment written before
	// this Writer (the camera ran on this node, stopped and started again):
	// no segment starts before it, as within one Writer. Zero: none.
	NotBefore time.Time

	// OnDrop is called for units dropped before a segment can start (no
	// keyframe yet, no parameter sets) or after a write error. Optional.
	OnDrop func(reason string)

	// Log is the camera's logger.
	Log *zap.Logger
}

// Writer cuts one camera's access units into segments. It is not safe for
// concurrent use: the camera's pipeline goroutine owns it.
type Writer struct {
	cfg WriterConfig

	tracks     []*media.Track
	videoIdx   int
	audioIdx   int
	videoCodec media.Codec
	params     paramSets

	seg *openSegment

	// Scratch space of the fragment writes, reused from fragment to
	// fragment: the audio of the fragment being built (finished samples,
	// then the pending one), the header region, the AVCC length prefixes
	// and buffer list of one video unit.
	audioData []byte
	hdr       []byte
	lens      []byte
	iov       [][]byte

	frag                 []*fragTrack
	fragVideo, fragAudio fragTrack
	expectSamples        int       // samples of the last fragment cut by its duration (0: none yet)
	nextRun              time.Time // chained wall-clock start of the next segment; zero after a discontinuity
	lastEnd              time.Time // end of the last finished segment
	lastDTS              time.Duration
	haveDTS              bool
	buf                  seekablebuffer.Buffer
}

// openSegment is the segment being written.
type openSegment struct {
	file     *spoolFile
	meta     Segment
	startDTS time.Duration
	fragDTS  time.Duration
	seq      uint32
	video    trackState
	audio    *trackState
	frag     openFragment
	frames   int
}

// NewWriter returns a Writer. Call SetTracks before WriteUnit.
func NewWriter(cfg WriterConfig) *Writer {
	if cfg.SegmentDuration <= 0 {
		cfg.SegmentDuration = 60 * time.Second
	}
	if cfg.FragmentDuration <= 0 {
		cfg.FragmentDuration = time.Second
	}
	if cfg.MaxJump <= 0 {
		cfg.MaxJump = 5 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Writer{cfg: cfg, videoIdx: -1, audioIdx: -1, lastEnd: cfg.NotBefore}
}

// LastEnd returns the end of the last segment finished, or NotBefore when
// none was.
func (w *Writer) LastEnd() time.Time { return w.lastEnd }

// SetTracks starts a new run of the source with these tracks. Any open
// segment is closed: a new run is a discontinuity.
func (w *Writer) SetTracks(tracks []*media.Track) error {
	w.Discontinuity()
	w.tracks = tracks
	w.videoIdx, w.audioIdx = -1, -1
	for i, t := range tracks {
		switch {
		case t.Codec.IsVideo() && w.videoIdx < 0:
			w.videoIdx = i
		case t.Codec == media.AAC && t.AAC != nil && w.audioIdx < 0:
			w.audioIdx = i
		}
	}
	if w.videoIdx < 0 {
		return ErrNoVideo
	}
	vt := tracks[w.videoIdx]
	w.videoCodec = vt.Codec
	w.params = paramSets{vps: vt.VPS, sps: vt.SPS, pps: vt.PPS}.clone()
	return nil
}

// Discontinuity closes the open segment; the next segment starts at the next
// keyframe with a fresh wall-clock start.
func (w *Writer) Discontinuity() {
	w.closeSegment(0, false)
	w.nextRun = time.Time{}
	w.haveDTS = false
}

// Close finishes the open segment and lets go of the scratch space (a
// later WriteUnit allocates it again).
func (w *Writer) Close() {
	w.Discontinuity()
	w.audioData, w.hdr, w.lens, w.iov = nil, nil, nil, nil
	w.frag, w.fragVideo.samples, w.fragAudio.samples = nil, nil, nil
}

// WriteUnit adds one access unit. A video unit it writes gets u.Stored:
// where its bytes are in the open segment's spool file, readable until
// that segment ends. A video unit it does not write (no keyframe yet, no
// parameter sets, a write error) gets a zero Stored. The Writer keeps
// nothing of u's memory once WriteUnit returns (parameter sets are
// copied), so the caller may reuse it.
func (w *Writer) WriteUnit(u *media.Unit) error {
	switch u.Track {
	case w.videoIdx:
		return w.writeVideo(u)
	case w.audioIdx:
		w.writeAudio(u)
		return nil
	}
	return nil
}

func (w *Writer) drop(reason string) {
	if w.cfg.OnDrop != nil {
		w.cfg.OnDrop(reason)
	}
}

func (w *Writer) writeVideo(u *media.Unit) error {
	u.Stored = media.Stored{}
	if w.haveDTS {
		step := u.DTS - w.lastDTS
		if step <= 0 || step > w.cfg.MaxJump {
			w.cfg.Log.Info("timestamp discontinuity, closing segment", zap.Duration("step", step))
			w.Discontinuity()
		}
	}
	w.lastDTS, w.haveDTS = u.DTS, true

	if u.Key {
		np := w.params.update(w.videoCodec, u.NALUs)
		if !np.equal(w.params) {
			if w.seg != nil {
				w.cfg.Log.Info("parameter sets changed, closing segment")
				w.closeSegment(u.DTS, true)
				w.nextRun = time.Time{}
			}
			w.params = np.clone()
		}
	}

	if w.seg != nil && u.Key && u.DTS-w.seg.startDTS >= w.cfg.SegmentDuration {
		w.closeSegment(u.DTS, true)
	}

	if w.seg == nil {
		if !u.Key {
			w.drop("no_keyframe")
			return nil
		}
		if !w.params.complete(w.videoCodec) {
			w.drop("no_params")
			return ErrNoParams
		}
		if err := w.openSegment(u); err != nil {
			w.drop("spool_write")
			return err
		}
	}

	s := w.seg
	abs := toTicks(u.DTS, s.video.timescale)
	size := videoSize(u)
	s.video.finish(abs)
	if len(s.video.samples) > 0 {
		full := s.fragmentFull(size)
		if full || u.DTS-s.fragDTS >= w.cfg.FragmentDuration {
			why := endDuration
			if full {
				why = endFull
			}
			if err := w.flushFragment(s, why); err != nil {
				w.failSegment(err)
				w.drop("spool_write")
				return err
			}
			s.fragDTS = u.DTS
		}
	}
	if err := w.writeSample(s, u, size); err != nil {
		w.failSegment(err)
		w.drop("spool_write")
		return err
	}
	s.video.hold(abs, u.DTS, int32(toTicks(u.PTS-u.DTS, s.video.timescale)), u.Key, size)
	s.frames++
	return nil
}

func (w *Writer) writeAudio(u *media.Unit) {
	s := w.seg
	if s == nil || s.audio == nil || u.DTS < s.startDTS {
		return
	}
	abs := toTicks(u.DTS, s.audio.timescale)
	s.audio.finish(abs)
	w.audioData = append(w.audioData, u.Payload...)
	s.audio.hold(abs, u.DTS, 0, true, uint32(len(u.Payload)))
}

// openSegment starts a segment at keyframe u.
func (w *Writer) openSegment(u *media.Unit) error {
	start := w.nextRun
	if start.IsZero() {
		start = u.Time
		if start.IsZero() {
			start = time.Now()
		}
		if start.Before(w.lastEnd) {
			start = w.lastEnd
		}
	}
	width, height := w.params.dimensions(w.videoCodec)
	meta := Segment{
		Camera: w.cfg.Camera,
		Start:  start,
		Codec:  w.videoCodec,
		Width:  width,
		Height: height,
	}

	init := fmp4.Init{}
	vt := &fmp4.InitTrack{ID: 1, TimeScale: 90000}
	if w.videoCodec == media.H265 {
		vt.Codec = &codecs.H265{VPS: w.params.vps, SPS: w.params.sps, PPS: w.params.pps}
	} else {
		vt.Codec = &codecs.H264{SPS: w.params.sps, PPS: w.params.pps}
	}
	init.Tracks = append(init.Tracks, vt)
	var audio *trackState
	if w.audioIdx >= 0 {
		at := w.tracks[w.audioIdx]
		rate := int64(at.AAC.SampleRate)
		if rate <= 0 {
			rate = int64(at.ClockRate)
		}
		if rate > 0 {
			init.Tracks = append(init.Tracks, &fmp4.InitTrack{
				ID:        2,
				TimeScale: uint32(rate),
				Codec:     &codecs.MPEG4Audio{Config: *at.AAC},
			})
			audio = &trackState{id: 2, timescale: rate, defDur: 1024, segBase: toTicks(u.DTS, rate)}
			meta.AudioCodec = media.AAC
		}
	}

	w.buf.Reset()
	if _, err := w.buf.Seek(0, 0); err != nil {
		return err
	}
	if err := init.Marshal(&w.buf); err != nil {
		return fmt.Errorf("marshal init: %w", err)
	}
	meta.InitSize = int64(w.buf.Len())

	f, err := w.cfg.Spool.create(meta)
	if err != nil {
		return err
	}
	if err := f.writeAt(0, w.buf.Bytes()); err != nil {
		f.abort()
		return err
	}
	w.audioData = w.audioData[:0]
	w.seg = &openSegment{
		file:     f,
		meta:     meta,
		startDTS: u.DTS,
		fragDTS:  u.DTS,
		video:    trackState{id: 1, timescale: 90000, video: true, defDur: 3600, segBase: toTicks(u.DTS, 90000)},
		audio:    audio,
	}
	// segment-relative ticks: subtract the base when finishing samples.
	w.seg.video.next = 0
	w.nextRun = start
	return nil
}

// closeSegment finishes the open segment. When endKnown, the last video
// frame lasts until endDTS; otherwise it gets the previous frame's duration.
func (w *Writer) closeSegment(endDTS time.Duration, endKnown bool) {
	s := w.seg
	if s == nil {
		return
	}
	w.seg = nil
	var videoEnd int64
	if endKnown {
		videoEnd = toTicks(endDTS, s.video.timescale)
	} else {
		videoEnd = s.video.pendingTicks + int64(s.video.lastDur)
		if s.video.lastDur == 0 {
			videoEnd = s.video.pendingTicks + int64(s.video.defDur)
		}
	}
	s.video.finish(videoEnd)
	if s.audio != nil && s.audio.pending {
		if s.audio.pendingDTS < s.startDTS+fromTicks(s.video.next, s.video.timescale) {
			s.audio.finish(s.audio.pendingTicks + int64(s.audio.lastDur))
		} else {
			w.audioData = w.audioData[:len(w.audioData)-int(s.audio.pendingSize)]
		}
		s.audio.pending = false
	}
	err := w.flushFragment(s, endSegment)
	for err == nil && s.audio != nil && len(s.audio.samples) > 0 {
		err = w.flushFragment(s, endSegment) // audio the last fragment had no room for
	}
	if err != nil {
		w.cfg.Log.Error("writing last fragment failed, recovering the segment from its fragments", zap.Error(err))
		w.nextRun = time.Time{}
		w.salvage(s)
		return
	}
	s.meta.Duration = fromTicks(s.video.next, s.video.timescale)
	s.meta.Frames = s.frames
	if s.meta.Duration <= 0 {
		s.file.abort()
		return
	}
	w.lastEnd = s.meta.End()
	w.nextRun = s.meta.End()
	if err := s.file.finish(s.meta); err != nil {
		w.cfg.Log.Error("finishing segment failed, recovering it from its fragments", zap.Error(err))
		w.salvage(s)
	}
}

// salvage queues what the spool file of s holds (cut back to its last
// complete fragment) after a write error; when even that fails, the files
// are removed so that a full disk never keeps unaccounted leftovers.
func (w *Writer) salvage(s *openSegment) {
	s.file.drop()
	err := w.cfg.Spool.recoverFile(s.file.path, true)
	if errors.Is(err, syscall.ENOSPC) {
		// noSpace made room if it could: once more.
		err = w.cfg.Spool.recoverFile(s.file.path, true)
	}
	if err == nil || errors.Is(err, ErrCorruptSpool) {
		return
	}
	w.cfg.Log.Error("segment lost after a spool write error", zap.Int64("start_ms", s.meta.StartMs()), zap.Error(err))
	removeSegmentFiles(s.file.path)
	w.cfg.Spool.addBytes(-s.file.size)
}

// failSegment abandons the open segment after a write error, keeping the
// fragments already on disk for recovery.
func (w *Writer) failSegment(err error) {
	s := w.seg
	if s == nil {
		return
	}
	w.seg = nil
	w.nextRun = time.Time{}
	w.cfg.Log.Error("spool write failed, segment cut short", zap.Error(err))
	w.salvage(s)
}

// Dimensions returns the picture size of the current parameter sets.
func (w *Writer) Dimensions() (width, height int) {
	if w.seg != nil {
		return w.seg.meta.Width, w.seg.meta.Height
	}
	return w.params.dimensions(w.videoCodec)
}
