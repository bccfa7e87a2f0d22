package rtsp

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/pion/rtcp"

	"github.com/vigia/vigia/ingest"
)

// receiverReportPeriod is how often RTCP receiver reports go to the camera.
const receiverReportPeriod = 10 * time.Second

// frameSize is the payload size in an interleaved frame's header.
func frameSize(h []byte) int { return int(h[2])<<8 | int(h[3]) }

// channelUse is what an interleaved channel carries.
type channelUse struct {
	track int // -1: nothing of ours
	rtcp  bool
}

// playState is what the read loop shares with the maintenance goroutine.
type playState struct {
	stats    []rtpStats // per track
	timedOut atomic.Bool
	pkt      rtpPacket   // the packet being handled (read loop only)
	answers  chan []byte // answers to the camera's requests, written by maintain
}

// maxQueuedAnswers bounds the answers to the camera's requests waiting to
// be written; past it a request goes unanswered (a camera that sends
// requests faster than it reads answers).
const maxQueuedAnswers = 8

// answer queues an answer for the maintenance goroutine to write: a write
// can wait for the camera to read, and the read loop waits for nothing
// but the camera's data.
func (ps *playState) answer(b []byte) {
	select {
	case ps.answers <- b:
	default:
	}
}

// rtpStats are one track's receiver figures for RTCP receiver reports,
// written by the read loop and read by the maintenance goroutine.
type rtpStats struct {
	channel int // RTCP channel

	seen   atomic.Bool
	ssrc   atomic.Uint32
	extSeq atomic.Uint32 // cycles << 16 | highest sequence number
	lsr    atomic.Uint32 // middle 32 bits of the last sender report's NTP time
	lsrAt  atomic.Int64  // arrival of that report, Unix ns

	// read loop only
	started bool
	cycles  uint32
	maxSeq  uint16
}

func (st *rtpStats) packet(p *rtpPacket) {
	switch {
	case !st.started:
		st.started, st.maxSeq = true, p.seq
		st.ssrc.Store(p.ssrc)
		st.seen.Store(true)
	case p.seq < st.maxSeq && st.maxSeq-p.seq > 0x8000:
		st.cycles++
		st.maxSeq = p.seq
	case p.seq > st.maxSeq:
		st.maxSeq = p.seq
	}
	st.extSeq.Store(st.cycles<<16 | uint32(st.maxSeq))
}

// senderReports notes the sender reports of an RTCP compound packet, and
// returns the NTP and RTP times of the last one (ok false without one).
func (st *rtpStats) senderReports(b []byte, now time.Time) (ntp uint64, rtpTime uint32, ok bool) {
	for len(b) >= 4 {
		n := 4 * (int(binary.BigEndian.Uint16(b[2:])) + 1)
		if n > len(b) {
			return
		}
		if b[1] == 200 && n >= 28 { // SR: header, SSRC, NTP (64), RTP time, ...
			ntp, rtpTime, ok = binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint32(b[16:]), true
			st.lsr.Store(uint32(ntp >> 16))
			st.lsrAt.Store(now.UnixNano())
		}
		b = b[n:]
	}
	return
}

// report is the receiver report block of the track.
func (st *rtpStats) report(now time.Time) (rtcp.ReceptionReport, bool) {
	if !st.seen.Load() {
		return rtcp.ReceptionReport{}, false
	}
	rr := rtcp.ReceptionReport{SSRC: st.ssrc.Load(), LastSequenceNumber: st.extSeq.Load()}
	if at := st.lsrAt.Load(); at != 0 {
		rr.LastSenderReport = st.lsr.Load()
		rr.Delay = uint32(now.Sub(time.Unix(0, at)).Seconds() * 65536)
	}
	return rr, true
}

// readLoop reads the camera's interleaved RTP until the connection ends,
// handing each packet to its track's handler straight from the read
// buffer. The answers to keepalives and the server's requests are handled
// on the way. It waits on nothing but the connection: units go to the sink
// through a handoff that drops rather than waits, and answers to the
// camera's requests are written by the maintenance goroutine.
func (s *tcpSession) readLoop(r *reader, channels []int, ps *playState) error {
	var uses [256]channelUse
	for i := range uses {
		uses[i].track = -1
	}
	for i, ch := range channels {
		uses[ch&0xff] = channelUse{track: i}
		uses[(ch+1)&0xff] = channelUse{track: i, rtcp: true}
	}
	var big []byte
	for {
		kind, err := s.next()
		if err != nil {
			return err
		}
		switch kind {
		case 'R':
			var res base.Response
			if err := res.Unmarshal(s.br); err != nil {
				return fmt.Errorf("rtsp response: %w", err)
			}
			continue
		case 'Q':
			b, err := s.readRequest()
			if err != nil {
				return err
			}
			ps.answer(b)
			continue
		}
		h, err := s.br.Peek(4)
		if err != nil {
			return err
		}
		use, n := uses[h[1]], frameSize(h)
		if use.track < 0 {
			if _, err := s.br.Discard(4 + n); err != nil {
				return err
			}
			continue
		}
		var payload []byte
		whole := 4+n <= s.br.Size()
		if whole {
			f, err := s.br.Peek(4 + n)
			if err != nil {
				return err
			}
			payload = f[4:]
		} else {
			if _, err := s.br.Discard(4); err != nil {
				return err
			}
			if cap(big) < n {
				big = make([]byte, n)
			}
			payload = big[:n]
			if _, err := io.ReadFull(s.br, payload); err != nil {
				return err
			}
		}
		now := s.tc.at // the read that brought the frame's last bytes
		st := &ps.stats[use.track]
		if use.rtcp {
			if ntp, ts, ok := st.senderReports(payload, now); ok {
				r.senderReport(use.track, ntp, ts)
			}
		} else if p, err := parseRTP(payload); err != nil {
			r.decodeError(err)
		} else if len(r.medias[use.track].Formats) > 1 && p.pt != r.formats[use.track].PayloadType() {
			// Another format of the media (a camera offering several in
			// one media sends its first): not the one read. A media of one
			// format takes any payload type (cameras that stamp another
			// than their SDP's are recorded all the same).
			r.decodeError(errPayloadTypeOther)
		} else {
			// One packet value for the session: handing the handler a
			// pointer to a loop variable would put each packet on the heap.
			ps.pkt = p
			st.packet(&ps.pkt)
			r.handlers[use.track].packet(&ps.pkt, now)
		}
		if whole {
			if _, err := s.br.Discard(4 + n); err != nil {
				return err
			}
		}
	}
}

// maintain runs beside the read loop until done closes: it ends a session
// that delivered nothing for the read timeout, and sends keepalives and
// receiver reports.
func (s *tcpSession) maintain(r *reader, ps *playState, done <-chan struct{}) {
	tick := s.timeout / 4
	keepalive := s.keepalive
	if keepalive <= 0 {
		keepalive = defaultKeepalive
	}
	reportEvery := s.reportEvery
	if reportEvery <= 0 {
		reportEvery = receiverReportPeriod
	}
	tick = min(tick, keepalive, reportEvery)
	t := time.NewTicker(max(tick, 100*time.Millisecond))
	defer t.Stop()
	lastKeepalive, lastReport := time.Now(), time.Now()
	var ssrc [4]byte
	_, _ = rand.Read(ssrc[:])
	for {
		select {
		case <-done:
			return
		case b := <-ps.answers:
			if err := s.writeRaw(b); err != nil {
				s.close()
				return
			}
		case now := <-t.C:
			if r.idleFor() > s.timeout {
				ps.timedOut.Store(true)
				s.close()
				return
			}
			if now.Sub(lastKeepalive) >= keepalive {
				lastKeepalive = now
				if err := s.sendKeepalive(); err != nil {
					s.close()
					return
				}
			}
			if now.Sub(lastReport) >= reportEvery {
				lastReport = now
				if err := s.sendReports(ps, binary.BigEndian.Uint32(ssrc[:]), now); err != nil {
					s.close()
					return
				}
			}
		}
	}
}

// sendReports sends one RTCP receiver report per track that received RTP.
func (s *tcpSession) sendReports(ps *playState, ssrc uint32, now time.Time) error {
	for i := range ps.stats {
		st := &ps.stats[i]
		rep, ok := st.report(now)
		if !ok {
			continue
		}
		b, err := (&rtcp.ReceiverReport{SSRC: ssrc, Reports: []rtcp.ReceptionReport{rep}}).Marshal()
		if err != nil {
			return err
		}
		fr := base.InterleavedFrame{Channel: st.channel, Payload: b}
		out, err := fr.Marshal()
		if err != nil {
			return err
		}
		if err := s.writeRaw(out); err != nil {
			return err
		}
	}
	return nil
}

// errPanic wraps a panic of the read loop.
var errPanic = errors.New("panic while reading")

// play runs the session until the connection ends: the read loop on the
// caller's goroutine, maintenance beside it. A panic ends the session.
func (s *tcpSession) playLoop(r *reader, channels []int) (err error) {
	ps := &playState{stats: make([]rtpStats, len(channels)), answers: make(chan []byte, maxQueuedAnswers)}
	for i, ch := range channels {
		ps.stats[i].channel = ch + 1
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		s.maintain(r, ps, done)
	}()
	defer func() {
		close(done)
		<-exited
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", errPanic, v)
		}
		if ps.timedOut.Load() {
			err = ingest.ErrReadTimeout
		}
	}()
	return s.readLoop(r, channels, ps)
}
