package synth

import (
	"container/heap"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"time"

	"github.com/vigia/vigia/media"
)

// fleetScratch is the scheduler's reusable space for one write.
type fleetScratch struct {
	bufs [][]byte
	sr   [2 * (interleavedHeaderSize + senderReportSize)]byte
	mark [interleavedHeaderSize + rtpHeaderSize + maxMarkNALSize]byte
	iov  fleetIovecs
}

// senderReportSize is an RTCP sender report without report blocks.
const senderReportSize = 28

// schedule is the fleet's one scheduler goroutine: every Tick it writes the
// due frames of every playing session, in order of due time. It exits when
// terminate is closed.
func (f *Fleet) schedule() {
	defer close(f.done)
	t := time.NewTicker(f.cfg.Tick)
	defer t.Stop()
	var h fleetHeap
	var sc fleetScratch
	var incoming []*fleetSession
	for {
		select {
		case <-f.terminate:
			return
		case <-t.C:
		}
		now := time.Since(f.epoch)
		f.mu.Lock()
		incoming, f.incoming = f.incoming, incoming[:0]
		f.mu.Unlock()
		for i, s := range incoming {
			if s.start(now) {
				heap.Push(&h, s)
			}
			incoming[i] = nil
		}
		for len(h) > 0 {
			s := h[0]
			if !s.closed.Load() && s.due > now {
				break
			}
			if !s.closed.Load() {
				f.step(s, now, &sc)
			}
			if s.closed.Load() {
				heap.Pop(&h)
				continue
			}
			heap.Fix(&h, 0)
		}
	}
}

// start begins the media of a session that answered PLAY at the camera's
// next frame. It reports false when the session ended meanwhile or set up
// no video.
func (s *fleetSession) start(now time.Duration) bool {
	s.mu.Lock()
	if s.closed.Load() || !s.video.set {
		s.mu.Unlock()
		return false
	}
	s.playing = true
	s.mu.Unlock()
	s.f.stats.sessions.Add(1)
	s.f.stats.sessionsEver.Add(1)
	clips := s.cam.clips
	s.k = s.cam.frameAt(now)
	s.k0, s.due = s.k, s.cam.frameDue(s.k)
	if s.audio.set {
		s.apos = rand.IntN(len(clips.audio.frames))
		s.abase, s.ak = s.due, 0
	}
	return true
}

// frameTime is the time of frame k at fps frames a second.
func frameTime(k int64, fps float64) time.Duration {
	return time.Duration(math.Round(float64(k) * float64(time.Second) / fps))
}

// step writes the video frame of s due now (its mark, then the frame),
// the audio frames due up to it and, when their time has come, sender
// reports, in one vectored write.
func (f *Fleet) step(s *fleetSession, now time.Duration, sc *fleetScratch) {
	clips := s.cam.clips
	if now-s.due > maxLag {
		k := s.cam.frameAt(now)
		f.stats.late.Add(1)
		f.stats.skipped.Add(uint64(k - s.k))
		s.k, s.due = k, s.cam.frameDue(k)
		s.abase, s.ak = s.due, 0
	}
	due := s.due
	bufs := sc.bufs[:0]
	var aPackets, aOctets uint32
	if s.audio.set {
		rate := float64(clips.aac.SampleRate()) / 1024
		for range maxBurst {
			at := s.abase + frameTime(s.ak, rate)
			if at > due {
				break
			}
			fr := &clips.audio.frames[s.apos]
			ts := s.audio.ts0 + uint32(s.an*1024)
			s.audio.seq = fr.stamp(s.audio.channel, s.audio.seq, ts, s.audio.ssrc)
			s.audio.lastTS, s.audio.lastAt = ts, at
			aPackets += uint32(len(fr.packets))
			aOctets += fr.payload
			bufs = append(bufs, fr.buf)
			s.an++
			s.ak++
			s.apos = (s.apos + 1) % len(clips.audio.frames)
		}
	}
	fr := &clips.video.frames[(int64(s.cam.pos0)+s.k)%int64(len(clips.video.frames))]
	ts := s.video.ts0 + uint32(int64(math.Round(float64(s.k-s.k0)*videoClockRate/clips.clip.FPS)))
	mark := s.markPacket(sc, ts, uint64(s.k))
	s.video.seq = fr.stamp(s.video.channel, s.video.seq, ts, s.video.ssrc)
	s.video.lastTS, s.video.lastAt = ts, due
	bufs = append(bufs, mark, fr.buf)
	reports := 0
	if !s.srSent || due-s.lastSR >= f.cfg.SenderReportEvery {
		s.lastSR, s.srSent = due, true
		bufs, reports = s.senderReports(sc, bufs, fr, aPackets, aOctets)
	}
	s.mu.Lock()
	sent, n, err := s.sendLocked(&sc.iov, bufs, true)
	s.mu.Unlock()
	clear(bufs)
	sc.bufs = bufs[:0]
	s.k++
	s.due = s.cam.frameDue(s.k)
	if err != nil {
		s.close()
		return
	}
	f.stats.bytes.Add(uint64(n))
	if !sent {
		f.stats.dropped.Add(1)
		return
	}
	f.stats.frames.Add(1)
	f.stats.reports.Add(uint64(reports))
	s.video.packets += uint32(len(fr.packets)) + 1
	s.video.octets += fr.payload + uint32(len(mark)-interleavedHeaderSize-rtpHeaderSize)
	s.audio.packets += aPackets
	s.audio.octets += aOctets
}

// markPacket writes into sc the RTP packet of the mark of frame k (an SEI
// NAL unit of its own, before the frame's packets, with its timestamp)
// and returns it.
func (s *fleetSession) markPacket(sc *fleetScratch, ts uint32, k uint64) []byte {
	b := append(sc.mark[:0], '$', s.video.channel, 0, 0, 0x80, videoPayloadType)
	b = binary.BigEndian.AppendUint16(b, s.video.seq)
	b = binary.BigEndian.AppendUint32(b, ts)
	b = binary.BigEndian.AppendUint32(b, s.video.ssrc)
	b = appendMark(b, s.cam.clips.codec, k)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)-interleavedHeaderSize))
	s.video.seq++
	return b
}

// senderReports appends the sender report of each track to bufs, with the
// counts of what was sent so far and the frame being sent now; they are
// written into sc, which stays valid until the write is done.
func (s *fleetSession) senderReports(sc *fleetScratch, bufs [][]byte, fr *wireFrame, aPackets, aOctets uint32) ([][]byte, int) {
	b := sc.sr[:0]
	b = appendSenderReport(b, &s.video, s.f.epoch, uint32(len(fr.packets))+1, fr.payload)
	n := 1
	if s.audio.set && s.audio.packets+aPackets > 0 {
		b = appendSenderReport(b, &s.audio, s.f.epoch, aPackets, aOctets)
		n++
	}
	return append(bufs, b), n
}

// appendSenderReport appends an interleaved RTCP sender report of t: its
// last frame's timestamp at the wall-clock time it was due (epoch plus its
// due time), and its packet
// and octet counts with those of the frame going out with the report.
func appendSenderReport(b []byte, t *trackSession, epoch time.Time, packets, octets uint32) []byte {
	b = append(b, '$', t.channel+1, 0, senderReportSize, 0x80, 200, 0, senderReportSize/4-1)
	b = binary.BigEndian.AppendUint32(b, t.ssrc)
	b = binary.BigEndian.AppendUint64(b, media.NTPTime(epoch.Add(t.lastAt)))
	b = binary.BigEndian.AppendUint32(b, t.lastTS)
	b = binary.BigEndian.AppendUint32(b, t.packets+packets)
	return binary.BigEndian.AppendUint32(b, t.octets+octets)
}

// sendLocked writes bufs to the connection without waiting. Bytes the
// socket does not take now are queued in pending, sent before anything
// else at the next write; while a queue is left, new bytes join it. A
// droppable write (media) is dropped instead when the queue would pass
// MaxPending. It returns whether bufs were written or queued and the bytes
// written now.
func (s *fleetSession) sendLocked(iov *fleetIovecs, bufs [][]byte, droppable bool) (bool, int, error) {
	if s.closed.Load() {
		return false, 0, errFleetClosed
	}
	written := 0
	if len(s.pending) > s.sent {
		n, err := s.w.writev(iov, [][]byte{s.pending[s.sent:]})
		written += n
		if err != nil {
			return false, written, err
		}
		s.sent += n
		if s.sent == len(s.pending) {
			s.pending, s.sent = s.pending[:0], 0
			if cap(s.pending) > 64<<10 {
				s.pending = nil
			}
		}
	}
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	if len(s.pending) > s.sent {
		if droppable && len(s.pending)-s.sent+total > s.f.cfg.MaxPending {
			return false, written, nil
		}
		for _, b := range bufs {
			s.pending = append(s.pending, b...)
		}
		return true, written, nil
	}
	n, err := s.w.writev(iov, bufs)
	written += n
	if err != nil {
		return false, written, err
	}
	for _, b := range bufs { // queue what the socket did not take
		if n >= len(b) {
			n -= len(b)
			continue
		}
		s.pending = append(s.pending, b[n:]...)
		n = 0
	}
	return true, written, nil
}

// fleetHeap orders playing sessions by the due time of their next frame.
type fleetHeap []*fleetSession

func (h fleetHeap) Len() int           { return len(h) }
func (h fleetHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h fleetHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *fleetHeap) Push(x any) {
	s := x.(*fleetSession)
	s.heapIdx = len(*h)
	*h = append(*h, s)
}
func (h *fleetHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.heapIdx = -1
	return s
}
