package segmenter

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/vigia/vigia/media"
)

// openFragment is the fragment being written. At its start a header region
// is reserved in the spool file; each video sample is written after it as
// it arrives. At its end the audio is written after the video and the
// header region (moof, free, mdat header) over the reserve.
type openFragment struct {
	open       bool
	start      int64 // file offset of the header region
	reserve    int   // size of the header region
	capacity   int   // samples, of all tracks, its moof can describe
	videoBytes int64 // video bytes written after the header region
}

// Sizing of the header region.
const (
	// firstFragmentSamples is the capacity of a writer's first fragment
	// per second of FragmentDuration: 60 fps video with 48 kHz AAC (47
	// frames a second) fits.
	firstFragmentSamples = 128

	// maxFragmentSamples bounds the capacity: a header region of at most
	// about 128 KiB.
	maxFragmentSamples = 8192

	// maxFragmentVideo ends a fragment before its media nears the limit of
	// a 32-bit mdat size.
	maxFragmentVideo = 1 << 30
)

// fragEnd is why a fragment ends; it decides the next fragment's capacity.
type fragEnd int

const (
	// endDuration: cut at FragmentDuration; its sample count is what the
	// next fragment is expected to hold.
	endDuration fragEnd = iota
	// endFull: its header region had no room for one more sample; the next
	// one gets room for twice its count.
	endFull
	// endSegment: the segment ended; its count says nothing of the next.
	endSegment
)

// reserveSize returns the size of a header region for capacity samples
// over tracks tracks: moof and mdat header. It is a multiple of 8, so the
// free box filling what the moof leaves is either absent or at least 8
// bytes (see moofFixedSize).
func reserveSize(tracks, capacity int) int {
	return moofFixedSize + tracks*trafFixedSize + capacity*trunEntrySize + boxHeaderSize
}

// fragmentCapacity returns the sample capacity of the next fragment: the
// count of the last fragment cut by its duration plus a quarter and 8, or
// firstFragmentSamples per second of FragmentDuration before there is one.
func (w *Writer) fragmentCapacity() int {
	if e := w.expectSamples; e > 0 {
		return min(e+e/4+8, maxFragmentSamples)
	}
	secs := int((w.cfg.FragmentDuration + time.Second - 1) / time.Second)
	return min(firstFragmentSamples*secs, maxFragmentSamples)
}

// fragmentFull reports whether the open fragment has no room for one more
// video sample of size bytes. Audio has no such check: a fragment can only
// end at a video sample (the last video sample's bytes are in place before
// its duration is known), so audio the header region has no room for waits
// in memory for the next fragment.
func (s *openSegment) fragmentFull(size uint32) bool {
	n := len(s.video.samples) + 1
	if s.audio != nil {
		n += len(s.audio.samples)
	}
	return n > s.frag.capacity || s.frag.videoBytes+int64(size) > maxFragmentVideo
}

// writeSample writes the bytes of video unit u (AVCC: each NAL unit after
// its 4-byte length) to the spool file after the fragment's video so far,
// straight from the unit's NAL units, and notes where in u.Stored. With no
// fragment open, one is opened first: its header region is reserved at the
// end of the file.
//
// Those bytes stay in place while the segment is open: the header region
// is written over its reserve, audio after the video, never over a
// sample. The file is closed when the segment ends (finished, aborted or
// salvaged), and reads through u.Stored fail from then on.
func (w *Writer) writeSample(s *openSegment, u *media.Unit, size uint32) error {
	if !s.frag.open {
		tracks := 1
		if s.audio != nil {
			tracks = 2
		}
		c := w.fragmentCapacity()
		s.frag = openFragment{open: true, start: s.file.size, reserve: reserveSize(tracks, c), capacity: c}
	}
	n := 4 * len(u.NALUs)
	w.lens = slices.Grow(w.lens[:0], n)[:n]
	w.iov = w.iov[:0]
	for i, nalu := range u.NALUs {
		l := w.lens[4*i : 4*i+4]
		binary.BigEndian.PutUint32(l, uint32(len(nalu)))
		w.iov = append(w.iov, l, nalu)
	}
	off := s.frag.start + int64(s.frag.reserve) + s.frag.videoBytes
	err := s.file.writeAt(off, w.iov...)
	clear(w.iov) // the unit is not kept
	w.iov = w.iov[:0]
	if err != nil {
		return err
	}
	s.frag.videoBytes += int64(size)
	u.Stored = media.Stored{File: s.file, Off: off, Size: int(size)}
	return nil
}

// flushFragment ends the fragment: it writes the finished audio samples the
// header region has room for after the video, then the header region, and
// fsyncs. With no fragment open (audio left over at the end of a segment),
// the audio goes to the end of the file after a header region of exactly
// its header's size.
func (w *Writer) flushFragment(s *openSegment, why fragEnd) error {
	tracks := w.frag[:0]
	room := maxFragmentSamples
	if s.frag.open {
		room = s.frag.capacity
	}
	if s.video.take(&w.fragVideo, len(s.video.samples)) {
		tracks = append(tracks, &w.fragVideo)
		room -= len(w.fragVideo.samples)
	}
	var audio []byte
	if s.audio != nil && s.audio.take(&w.fragAudio, room) {
		tracks = append(tracks, &w.fragAudio)
		audio = s.audioData[:w.fragAudio.bytes]
	}
	w.frag = tracks
	if len(tracks) == 0 {
		return nil
	}
	f := s.frag
	s.frag = openFragment{}
	if !f.open {
		f.start, f.reserve = s.file.size, moofSize(tracks)+boxHeaderSize
	}
	s.seq++
	hdr, err := appendHeader(w.hdr[:0], s.seq, tracks, f.reserve)
	w.hdr = hdr
	if err != nil {
		return err
	}
	if f.videoBytes == 0 {
		err = s.file.writeAt(f.start, hdr, audio)
	} else {
		if len(audio) > 0 {
			err = s.file.writeAt(f.start+int64(f.reserve)+f.videoBytes, audio)
		}
		if err == nil {
			err = s.file.writeAt(f.start, hdr)
		}
	}
	s.audioData = s.audioData[:copy(s.audioData, s.audioData[len(audio):])]
	if err != nil {
		return err
	}
	if err := s.file.sync(false); err != nil {
		return err
	}
	count := 0
	for _, t := range tracks {
		count += len(t.samples)
	}
	switch why {
	case endDuration:
		w.expectSamples = count
	case endFull:
		w.expectSamples = 2 * count
	}
	return nil
}
