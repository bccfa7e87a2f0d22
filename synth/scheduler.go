package synth

import (
	"math/rand/v2"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
)

const (
	// maxLag is how far behind its schedule a camera may fall (a starved
	// process) before its schedule is reset to now instead of bursting.
	maxLag = time.Second

	// maxBurst bounds the frames one track sends in one tick.
	maxBurst = 32
)

// scheduler writes the due frames of every camera. One goroutine serves all
// cameras so that hundreds of cameras cost one timer.
type scheduler struct {
	rnd     *rand.ChaCha8
	garbage []byte
	cams    []*camera
}

func newScheduler() *scheduler {
	var seed [32]byte
	for i := range seed {
		seed[i] = byte(rand.Uint32())
	}
	return &scheduler{rnd: rand.NewChaCha8(seed), garbage: make([]byte, 1500)}
}

// run ticks until terminate is closed. It exits when terminate is closed.
func (s *Server) run(sch *scheduler) {
	defer close(s.done)
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-s.terminate:
			return
		case now := <-t.C:
			s.mu.RLock()
			sch.cams = append(sch.cams[:0], s.list...)
			s.mu.RUnlock()
			for _, c := range sch.cams {
				c.step(now, sch)
			}
			clear(sch.cams)
		}
	}
}

// step writes the frames of c that are due at now. A frame that is due while
// the camera has no readers, is stalled or is down advances the timeline
// without being sent.
func (c *camera) step(now time.Time, sch *scheduler) {
	c.mu.Lock()
	defer c.mu.Unlock()

	rate := c.fps
	if c.sendFPS > 0 {
		rate = c.sendFPS
	}
	for range maxBurst {
		due := c.video.due(rate)
		if due.After(now) {
			break
		}
		if now.Sub(due) > maxLag {
			c.video.base, c.video.k = now, 0
			c.lagSkips++
			continue
		}
		c.sendVideo(due, c.active(due), sch)
		c.video.k++
	}

	if c.audio == nil {
		return
	}
	rate = c.audioRate()
	for range maxBurst {
		due := c.aud.due(rate)
		if due.After(now) {
			break
		}
		if now.Sub(due) > maxLag {
			c.aud.base, c.aud.k = now, 0
			continue
		}
		c.sendAudio(due, c.active(due), sch)
		c.aud.k++
	}
}

func (c *camera) active(due time.Time) bool {
	return c.playing > 0 && !c.down && !due.Before(c.stallTo)
}

func (c *camera) sendVideo(due time.Time, send bool, sch *scheduler) {
	n, pos := c.video.next, c.video.pos
	c.video.next++
	c.video.pos = (pos + 1) % len(c.clip.Units)
	if !send {
		return
	}
	ts := c.rtpTime(c.videoTicks(n), videoClockRate)
	if c.write(c.videoMedia, videoPayloadType, &c.video, ts, c.clip.packets[pos], due, sch) {
		c.frames++
	}
}

func (c *camera) sendAudio(due time.Time, send bool, sch *scheduler) {
	n, pos := c.aud.next, c.aud.pos
	c.aud.next++
	c.aud.pos = (pos + 1) % len(c.audio.Units)
	if !send {
		return
	}
	ts := c.rtpTime(n*int64(c.audio.UnitSamples), c.audioClock())
	c.write(c.audioMedia, c.audioPT, &c.aud, ts, c.audio.packets[pos], due, sch)
}

// write sends the packets of one frame; with the garbage fault on, payloads
// are replaced by random bytes of the same length.
func (c *camera) write(medi *description.Media, pt uint8, tl *timeline, ts uint32,
	pays []rtpPayload, ntp time.Time, sch *scheduler,
) bool {
	for _, p := range pays {
		payload := p.payload
		if c.garbage {
			if len(sch.garbage) < len(payload) {
				sch.garbage = make([]byte, len(payload))
			}
			payload = sch.garbage[:len(payload)]
			_, _ = sch.rnd.Read(payload)
		}
		c.pkt = rtp.Packet{
			Header: rtp.Header{
				Version:        2,
				PayloadType:    pt,
				SequenceNumber: tl.seq,
				Timestamp:      ts,
				Marker:         p.marker,
			},
			Payload: payload,
		}
		tl.seq++
		if err := c.stream.WritePacketRTPWithNTP(medi, &c.pkt, ntp); err != nil {
			c.log.Debug("write rtp", zap.Error(err))
			return false
		}
	}
	// A sender report with the first frame and every senderReportEvery
	// after, tying the track's RTP time to the wall clock as cameras do
	// (the fleet's cameras send theirs on the same period).
	if tl.reported.IsZero() || ntp.Sub(tl.reported) >= senderReportEvery {
		tl.reported = ntp
		_ = c.stream.WritePacketRTCP(medi, &rtcp.SenderReport{NTPTime: media.NTPTime(ntp), RTPTime: ts})
	}
	return true
}

// senderReportEvery is the period of a synthetic camera's sender reports,
// each track's.
const senderReportEvery = 5 * time.Second
