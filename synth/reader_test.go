package synth

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
)

// videoAU is one access unit received by a testReader.
type videoAU struct {
	nalus [][]byte
	pts   int64  // 90 kHz, from the client's timestamp decoder
	ts    uint32 // raw RTP timestamp
}

// audioPacket is one G.711 or Opus packet received by a testReader.
type audioPacket struct {
	payload []byte
	ts      uint32
}

// testReader plays one camera with a gortsplib client over TCP and records
// what it receives. Its callbacks run on client goroutines, so it only
// records; tests inspect it with the locked accessors.
type testReader struct {
	c          *gortsplib.Client
	desc       *description.Session
	videoMedia *description.Media
	audioMedia *description.Media

	mu        sync.Mutex
	video     []videoAU
	audioPTS  []int64
	audioRaw  []audioPacket // G.711 and Opus packets
	payloads  [][]byte      // raw video payloads, when keepPayloads
	keep      bool
	decodeErr int
	reports   int
	srs       []receivedReport
}

// receivedReport is a sender report as the reader received it.
type receivedReport struct {
	media   *description.Media
	ntp     time.Time // the report's NTP time, read as RFC 3550 says
	rtp     uint32
	arrived time.Time
}

func dialReader(url, user, pass string, keepPayloads bool) (*testReader, error) {
	u, err := base.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if user != "" {
		u.User = nil
		u2, err := base.ParseURL(fmt.Sprintf("rtsp://%s:%s@%s%s", user, pass, u.Host, u.Path))
		if err != nil {
			return nil, err
		}
		u = u2
	}
	tcp := gortsplib.TransportTCP
	r := &testReader{keep: keepPayloads}
	r.c = &gortsplib.Client{Scheme: u.Scheme, Host: u.Host, Transport: &tcp}
	if err := r.c.Start2(); err != nil {
		return nil, err
	}
	desc, _, err := r.c.Describe(u)
	if err != nil {
		r.c.Close()
		return nil, err
	}
	r.desc = desc
	if err := r.c.SetupAll(desc.BaseURL, desc.Medias); err != nil {
		r.c.Close()
		return nil, err
	}
	for _, m := range desc.Medias {
		switch f := m.Formats[0].(type) {
		case *format.H264:
			r.videoMedia = m
			dec, err := f.CreateDecoder()
			if err != nil {
				r.c.Close()
				return nil, err
			}
			r.onVideo(m, f, dec.Decode)
		case *format.H265:
			r.videoMedia = m
			dec, err := f.CreateDecoder()
			if err != nil {
				r.c.Close()
				return nil, err
			}
			r.onVideo(m, f, dec.Decode)
		case *format.G711, *format.Opus:
			r.audioMedia = m
			r.c.OnPacketRTP(m, f, func(pkt *rtp.Packet) {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.audioRaw = append(r.audioRaw, audioPacket{append([]byte(nil), pkt.Payload...), pkt.Timestamp})
			})
		case *format.MPEG4Audio:
			r.audioMedia = m
			dec, err := f.CreateDecoder()
			if err != nil {
				r.c.Close()
				return nil, err
			}
			r.c.OnPacketRTP(m, f, func(pkt *rtp.Packet) {
				pts, ok := r.c.PacketPTS2(m, pkt)
				aus, err := dec.Decode(pkt)
				r.mu.Lock()
				defer r.mu.Unlock()
				if err != nil {
					r.decodeErr++
					return
				}
				if !ok {
					return
				}
				for i := range aus {
					r.audioPTS = append(r.audioPTS, pts+int64(i)*1024)
				}
			})
		}
	}
	r.c.OnPacketRTCPAny(func(m *description.Media, pkt rtcp.Packet) {
		if sr, ok := pkt.(*rtcp.SenderReport); ok {
			r.mu.Lock()
			r.reports++
			r.srs = append(r.srs, receivedReport{media: m, ntp: media.NTPToTime(sr.NTPTime), rtp: sr.RTPTime, arrived: time.Now()})
			r.mu.Unlock()
		}
	})
	if _, err := r.c.Play(nil); err != nil {
		r.c.Close()
		return nil, err
	}
	return r, nil
}

func (r *testReader) onVideo(m *description.Media, f format.Format, decode func(*rtp.Packet) ([][]byte, error)) {
	r.c.OnPacketRTP(m, f, func(pkt *rtp.Packet) {
		pts, ok := r.c.PacketPTS2(m, pkt)
		r.mu.Lock()
		if r.keep {
			r.payloads = append(r.payloads, append([]byte(nil), pkt.Payload...))
		}
		r.mu.Unlock()
		au, err := decode(pkt)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			if !benignDecodeErr(f, err) {
				r.decodeErr++
			}
			return
		}
		if !ok {
			// the client's timestamp decoder starts at the first keyframe
			return
		}
		r.video = append(r.video, videoAU{nalus: au, pts: pts, ts: pkt.Timestamp})
	})
}

func (r *testReader) close() { r.c.Close() }

// audioPackets returns a copy of the G.711 or Opus packets received so far.
func (r *testReader) audioPackets() []audioPacket {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]audioPacket(nil), r.audioRaw...)
}

// videoUnits returns a copy of the access units received so far.
func (r *testReader) videoUnits() []videoAU {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]videoAU(nil), r.video...)
}

func (r *testReader) counts() (video, audio, decodeErrs, reports int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.video), len(r.audioPTS), r.decodeErr, r.reports
}

// senderReports returns the sender reports received so far.
func (r *testReader) senderReports() []receivedReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedReport(nil), r.srs...)
}

// statusCode extracts the RTSP status of a client error, or 0.
func statusCode(err error) base.StatusCode {
	var bad liberrors.ErrClientBadStatusCode
	if errors.As(err, &bad) {
		return bad.Code
	}
	return 0
}

// startServer starts a server on a free loopback port, closed at test end.
func startServer(t *testing.T, cams ...CameraSpec) *Server {
	t.Helper()
	s := NewServer(Config{Addr: "127.0.0.1:0", Cameras: cams, Log: zaptest.NewLogger(t)})
	if err := s.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// benignDecodeErr reports whether a depacketizer error only means "wait for
// more packets" (including joining in the middle of a frame).
func benignDecodeErr(f format.Format, err error) bool {
	if _, ok := f.(*format.H265); ok {
		return errors.Is(err, rtph265.ErrMorePacketsNeeded) ||
			errors.Is(err, rtph265.ErrNonStartingPacketAndNoPrevious)
	}
	return errors.Is(err, rtph264.ErrMorePacketsNeeded) ||
		errors.Is(err, rtph264.ErrNonStartingPacketAndNoPrevious)
}

// sdpSPS returns the SPS announced in the reader's SDP.
func sdpSPS(r *testReader) []byte {
	switch f := r.videoMedia.Formats[0].(type) {
	case *format.H264:
		return f.SPS
	case *format.H265:
		return f.SPS
	}
	return nil
}
