package segmenter

import (
	"errors"
	"fmt"
	"hash/fnv"
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

	// Phase staggers the segments of cameras started together, so that
	// their ends, and the uploads that follow, spread over the segment
	// duration instead of coming at once. The first segment of a fresh
	// start aims at the first wall-clock time, at least half a
	// SegmentDuration after its start, that is Phase past a multiple of
	// SegmentDuration (so it aims at SegmentDuration/2 to 3/2 of it); the
	// segments after it at SegmentDuration. Zero staggers nothing: every
	// segment aims at SegmentDuration. See SegmentPhase.
	Phase time.Duration

	// MaxDuration bounds a segment: one that reaches it without a keyframe
	// to cut at is closed there, and video is dropped until the next
	// keyframe. It defaults to storage.MaxSegmentDuration(SegmentDuration),
	// which readers of storage rely on.
	MaxDuration time.Duration

	// MaxBytes bounds a segment's size: a segment is cut at the first
	// keyframe once it holds MaxBytes, and one that reaches twice
	// MaxBytes without a keyframe is closed there, video dropped until
	// the next keyframe, so that a camera sending huge frames makes many
	// segments of a bounded size, not one that storage and readers must
	// take whole. It defaults to 256 MiB.
	MaxBytes int64

	// Spool receives the segment files.
	Spool *Spool

	// NotBefore is the end of the camera's last segment written before
	// this Writer (the camera ran on this node, stopped and started again):
	// no segment starts before it, as within one Writer. Zero: none.
	NotBefore time.Time

	// OnDrop is called for units dropped before a segment can start (no
	// keyframe yet, no parameter sets) or after a write error. Optional.
	OnDrop func(reason string)

	// OnGap is called when a segment opens later than the end of the last
	// one (or than NotBefore): from is that end, to the new segment's
	// start; from is zero when neither is known (the first segment). reason is GapKeyframes or GapTimestamps when the Writer itself
	// closed the segment before the gap, "" otherwise (a Discontinuity,
	// new tracks). It runs on the caller's goroutine, within WriteUnit.
	// Optional.
	OnGap func(from, to time.Time, reason string)

	// Log is the camera's logger.
	Log *zap.Logger
}

// DefaultMaxSegmentBytes is the default of WriterConfig.MaxBytes.
const DefaultMaxSegmentBytes = 256 << 20

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

	// closing is the segment before seg while it waits for audio that
	// arrives after the keyframe that ended it (lateAudio).
	closing *openSegment

	// Scratch space of the fragment writes, reused from fragment to
	// fragment: the audio buffer of a finished segment (the next one
	// takes it), the header region, the AVCC length prefixes and buffer
	// list of one video unit.
	spareAudio []byte
	hdr        []byte
	lens       []byte
	iov        [][]byte

	frag                 []*fragTrack
	fragVideo, fragAudio fragTrack
	expectSamples        int       // samples of the last fragment cut by its duration (0: none yet)
	nextRun              time.Time // chained wall-clock start of the next segment; zero after a discontinuity
	lastEnd              time.Time // end of the last finished segment
	lastDTS              time.Duration
	haveDTS              bool
	lastFrameTicks       uint32 // duration of the last video frame whose duration was known, 90 kHz
	gapReason            string // why the Writer itself closed the last segment, for OnGap
	buf                  seekablebuffer.Buffer

	// Audio ahead of the video (heldAudio), its payloads back to back.
	held     []heldAudio
	heldData []byte
}

// heldAudio is an audio unit the video has not caught up with: whether it
// belongs to the open segment or the next one is known once a video frame
// is presented after it, or a keyframe starts the next segment before it.
type heldAudio struct {
	dts  time.Duration
	size int
}

// maxHeldAudio bounds the audio held ahead of the video: 5 s of 48 kHz AAC.
// Past it (video stalled, or lost up to a keyframe) the oldest goes to the
// open segment, or is dropped when there is none.
const maxHeldAudio = 256

// openSegment is the segment being written.
type openSegment struct {
	file     *spoolFile
	meta     Segment
	target   time.Duration // cut at the first keyframe this long after the start
	startDTS time.Duration
	fragDTS  time.Duration
	// audioFrom is the presentation time of the first keyframe: audio
	// before it belongs to the segment before. videoEdge is the latest
	// presentation time of a video frame written: audio up to it belongs
	// here. Once the segment's video has ended, audioEnd is where its
	// audio ends, and waitUntil the decoding time of video past which it
	// waits no longer for late audio.
	audioFrom, videoEdge time.Duration
	audioEnd, waitUntil  time.Duration
	// audioData holds the audio of the fragment being built (finished
	// samples, then the pending one).
	audioData []byte
	seq       uint32
	video     trackState
	audio     *trackState
	frag      openFragment
	frames    int
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
	if cfg.MaxDuration < cfg.SegmentDuration {
		cfg.MaxDuration = maxSegmentDuration(cfg.SegmentDuration)
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxSegmentBytes
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
	w.dropHeld() // a new run's times have nothing to do with the last one's
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
// keyframe with a fresh wall-clock start. Audio held ahead of the video
// waits for that segment.
func (w *Writer) Discontinuity() {
	w.closeSegment(nil)
	w.finishClosing()
	w.nextRun = time.Time{}
	w.haveDTS = false
	w.gapReason = ""
}

// Close finishes the open segment and lets go of the scratch space (a
// later WriteUnit allocates it again).
func (w *Writer) Close() {
	w.Discontinuity()
	w.dropHeld()
	w.spareAudio, w.hdr, w.lens, w.iov, w.held, w.heldData = nil, nil, nil, nil, nil, nil
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
	if c := w.closing; c != nil && u.DTS >= c.waitUntil {
		w.finishClosing()
	}
	if w.haveDTS {
		step := u.DTS - w.lastDTS
		if step <= 0 || step > w.cfg.MaxJump {
			w.cfg.Log.Info("timestamp discontinuity, closing segment", zap.Duration("step", step))
			w.Discontinuity()
			w.gapReason = GapTimestamps
		}
	}
	w.lastDTS, w.haveDTS = u.DTS, true

	if u.Key {
		np := w.params.update(w.videoCodec, u.NALUs)
		if !np.equal(w.params) {
			if w.seg != nil {
				w.cfg.Log.Info("parameter sets changed, closing segment")
				w.closeSegment(u)
				w.nextRun = time.Time{}
			}
			w.params = np.clone()
		}
	}

	if w.seg != nil && u.Key && (u.DTS-w.seg.startDTS >= w.seg.target || w.seg.file.size >= w.cfg.MaxBytes) {
		w.closeSegment(u)
	}
	if w.seg != nil && !u.Key && w.seg.file.size >= 2*w.cfg.MaxBytes {
		w.cfg.Log.Warn("no keyframe within the largest segment size, closing it; video waits for the next keyframe",
			zap.Int64("max_bytes", w.cfg.MaxBytes))
		w.closeSegment(u)
		w.nextRun = time.Time{}
		w.gapReason = GapKeyframes
	}
	// A frame at most MaxJump before MaxDuration lasts until the next one at
	// most MaxJump later, so a segment cut at the first frame past this
	// never exceeds MaxDuration.
	if w.seg != nil && !u.Key && u.DTS-w.seg.startDTS >= max(w.cfg.MaxDuration-w.cfg.MaxJump, w.seg.target) {
		w.cfg.Log.Warn("no keyframe within the longest segment, closing it; video waits for the next keyframe",
			zap.Duration("max", w.cfg.MaxDuration))
		w.closeSegment(u)
		w.nextRun = time.Time{}
		w.gapReason = GapKeyframes
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
		w.seg.audioFrom, w.seg.videoEdge = u.PTS, u.PTS
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
	s.videoEdge = max(s.videoEdge, u.PTS)
	w.releaseAudio(s, s.videoEdge, true)
	return nil
}

// writeAudio places an audio unit by its presentation time: in the open
// segment when the video has been presented up to it, else held until the
// video tells which segment it belongs to. Audio arrives ahead of the
// video of the same time (a camera's video takes longer to encode, a
// sender gathers audio frames into one packet, B-frames are presented
// after they arrive), and audio that belongs to the next segment must not
// be written at the end of this one. Audio from before the open segment's
// first keyframe belongs to the segment before it, already finished: it is
// dropped.
func (w *Writer) writeAudio(u *media.Unit) {
	if c := w.closing; c != nil {
		if u.DTS < c.audioEnd {
			if u.DTS >= c.audioFrom {
				w.appendAudio(c, u.DTS, u.Payload)
			}
			return
		}
		w.finishClosing() // its audio is all in
	}
	s := w.seg
	if s != nil && (s.audio == nil || u.DTS < s.audioFrom) {
		return
	}
	if s != nil && len(w.held) == 0 && u.DTS <= s.videoEdge {
		w.appendAudio(s, u.DTS, u.Payload)
		return
	}
	if n := len(w.held); n > 0 && u.DTS <= w.held[n-1].dts {
		return // back in time (the source moved the track): what is held stands
	}
	if len(w.held) == maxHeldAudio {
		if s != nil {
			w.appendAudio(s, w.held[0].dts, w.heldData[:w.held[0].size])
		}
		w.shiftHeld()
	}
	w.held = append(w.held, heldAudio{dts: u.DTS, size: len(u.Payload)})
	w.heldData = append(w.heldData, u.Payload...)
}

// appendAudio adds an audio sample to the open segment, unless it goes
// back in time: a source that moves its audio track back (to where the
// camera's sender reports place it) does not overlap what is written.
func (w *Writer) appendAudio(s *openSegment, dts time.Duration, payload []byte) {
	if s.audio.pending && dts <= s.audio.pendingDTS {
		return
	}
	abs := toTicks(dts, s.audio.timescale)
	s.audio.finish(abs)
	s.audioData = append(s.audioData, payload...)
	s.audio.hold(abs, dts, 0, true, uint32(len(payload)))
}

// releaseAudio moves the held audio up to until (included when incl) into
// s; what comes before s's first keyframe is dropped.
func (w *Writer) releaseAudio(s *openSegment, until time.Duration, incl bool) {
	for len(w.held) > 0 {
		h := w.held[0]
		if h.dts > until || (h.dts == until && !incl) {
			return
		}
		if s.audio != nil && h.dts >= s.audioFrom {
			w.appendAudio(s, h.dts, w.heldData[:h.size])
		}
		w.shiftHeld()
	}
}

// shiftHeld removes the oldest held audio unit.
func (w *Writer) shiftHeld() {
	n := w.held[0].size
	w.heldData = w.heldData[:copy(w.heldData, w.heldData[n:])]
	w.held = w.held[:copy(w.held, w.held[1:])]
}

// dropHeld forgets the held audio.
func (w *Writer) dropHeld() {
	w.held, w.heldData = w.held[:0], w.heldData[:0]
}

// openSegment starts a segment at keyframe u.
func (w *Writer) openSegment(u *media.Unit) error {
	start := w.nextRun
	target := w.cfg.SegmentDuration
	if start.IsZero() {
		start = u.Time
		if start.IsZero() {
			start = time.Now()
		}
		if start.Before(w.lastEnd) {
			start = w.lastEnd
		}
		if w.cfg.OnGap != nil && (w.lastEnd.IsZero() || start.Sub(w.lastEnd) > touchTolerance) {
			w.cfg.OnGap(w.lastEnd, start, w.gapReason)
		}
		w.gapReason = ""
		if w.cfg.Phase > 0 {
			target = staggered(start, w.cfg.SegmentDuration, w.cfg.Phase)
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
	w.seg = &openSegment{
		audioData: w.spareAudio[:0],
		file:      f,
		meta:      meta,
		target:    target,
		startDTS:  u.DTS,
		fragDTS:   u.DTS,
		video:     trackState{id: 1, timescale: 90000, video: true, defDur: 3600, segBase: toTicks(u.DTS, 90000)},
		audio:     audio,
	}
	// segment-relative ticks: subtract the base when finishing samples.
	w.seg.video.next = 0
	w.nextRun = start
	return nil
}

// closeSegment ends the open segment. When next, the keyframe that
// starts the next segment, is known, the last video frame lasts until its
// decoding time and the audio goes up to its presentation time; otherwise
// the last frame gets the previous frame's duration (the last known one
// for a segment of one frame) and the audio goes up to the end of the
// latest frame presented. The segment's key (start, duration) is settled
// here; the file is finished at once, or, when audio up to its end is
// still to come, once it has (lateAudio).
func (w *Writer) closeSegment(next *media.Unit) {
	s := w.seg
	if s == nil {
		return
	}
	w.seg = nil
	w.finishClosing()
	var videoEnd int64
	if next != nil {
		videoEnd = toTicks(next.DTS, s.video.timescale)
		s.audioEnd = next.PTS
	} else {
		d := s.video.lastDur
		if d == 0 {
			d = w.lastFrameTicks
		}
		if d == 0 {
			d = s.video.defDur
		}
		videoEnd = s.video.pendingTicks + int64(d)
		s.audioEnd = s.videoEdge + fromTicks(int64(d), s.video.timescale)
	}
	s.video.finish(videoEnd)
	if s.video.lastDur > 0 {
		w.lastFrameTicks = s.video.lastDur
	}
	s.meta.Duration = fromTicks(s.video.next, s.video.timescale)
	s.meta.Frames = s.frames
	if s.meta.Duration > 0 {
		w.lastEnd = s.meta.End()
		w.nextRun = s.meta.End()
	}
	if s.audio != nil {
		w.releaseAudio(s, s.audioEnd, false)
		if next != nil && len(w.held) == 0 && !(s.audio.pending && s.audio.pendingDTS+fromTicks(int64(max(s.audio.lastDur, s.audio.defDur)), s.audio.timescale) >= s.audioEnd) {
			s.waitUntil = next.DTS + lateAudio
			w.closing = s
			return
		}
	}
	w.finishSegment(s)
}

// lateAudio is how long a segment waits, in decoding time of the video
// after it, for audio up to its end that arrives after the keyframe that
// ended it: a sender that gathers audio frames into packets sends them
// after the video of the same time (FFmpeg: up to 640 ms at 8 kHz).
const lateAudio = time.Second

// finishClosing finishes the segment waiting for late audio, if any.
func (w *Writer) finishClosing() {
	if c := w.closing; c != nil {
		w.closing = nil
		w.finishSegment(c)
	}
}

// finishSegment writes what is left of an ended segment (its last
// fragment, the audio up to its end) and hands the file to the spool.
func (w *Writer) finishSegment(s *openSegment) {
	defer func() { w.spareAudio = s.audioData[:0] }()
	if s.audio != nil && s.audio.pending {
		if s.audio.pendingDTS < s.audioEnd {
			s.audio.finish(s.audio.pendingTicks + int64(s.audio.lastDur))
		} else {
			s.audioData = s.audioData[:len(s.audioData)-int(s.audio.pendingSize)]
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
	if s.meta.Duration <= 0 {
		s.file.abort()
		return
	}
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

// staggered is the length the first segment of a fresh start at start
// aims at: up to the first time at least d/2 after start that is phase
// past a multiple of d since the Unix epoch, so d/2 to 3d/2.
func staggered(start time.Time, d, phase time.Duration) time.Duration {
	earliest := start.Add(d / 2)
	off := (time.Duration(earliest.UnixNano()%int64(d)) - phase%d + d) % d
	if off == 0 {
		return d / 2
	}
	return d/2 + d - off
}

// SegmentPhase is a camera's Phase: spread over [1 ms, d) by a hash of its
// id, the same on every node.
func SegmentPhase(camera string, d time.Duration) time.Duration {
	if d < 2*time.Millisecond {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(camera))
	ms := int64(d / time.Millisecond)
	return time.Duration(1+int64(h.Sum64()%uint64(ms-1))) * time.Millisecond
}
