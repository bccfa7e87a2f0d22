package e2e

import (
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/auth"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// matrixRelay is an RTSP server (gortsplib's) that FFmpeg publishes into
// and Vigia reads from: the RTP packets, and the SDP, are FFmpeg's. Each
// path can make the camera worse on the way: credentials, parameter sets
// left out of the SDP, packets lost.
type matrixRelay struct {
	server *gortsplib.Server
	url    string // base URL of readers
	// senderReports: the relay sends RTCP sender reports of its own,
	// every second, with the publisher's clock (gortsplib's come every
	// 10 s, with the relay's arrival times).
	senderReports bool

	// pub is where FFmpeg publishes: server itself, or with TLS a plain
	// server beside it (FFmpeg does not publish over RTSPS).
	pub    *gortsplib.Server
	pubURL string

	mu    sync.Mutex
	paths map[string]*relayPath
}

// relayOptions are the server-wide settings of a matrixRelay.
type relayOptions struct {
	// Auth is the authentication the server offers for protected paths:
	// "basic" or "digest".
	Auth string
	// TLS serves RTSPS.
	TLS bool
	// NoSenderReports: the server sends no RTCP sender reports.
	NoSenderReports bool
}

// relayPathOptions are a path's ways of making the camera worse.
type relayPathOptions struct {
	// Protected asks readers for viewerUser and viewerPass.
	Protected bool
	// StripParams leaves the parameter sets out of the SDP (in-band only).
	StripParams bool
	// DropEvery drops every n-th RTP packet, as a lossy network does.
	DropEvery int
	// DiscardAt, with DiscardFor, drops every packet for DiscardFor once
	// the stream has run for DiscardAt, as a relay does towards a reader
	// that fell behind (its queue full).
	DiscardAt, DiscardFor time.Duration
	// DiscardVideoOnly discards only the video's packets: the sound goes
	// on, as when a camera's picture stalls, or a reader drops the frames
	// after a lost keyframe packet until the next keyframe.
	DiscardVideoOnly bool
}

// relayPath is one published stream.
type relayPath struct {
	opts      relayPathOptions
	stream    *gortsplib.ServerStream
	publisher *gortsplib.ServerSession
	medias    map[*description.Media]*description.Media // the publisher's → the stream's
	reports   map[*description.Media]rtcp.SenderReport  // the publisher's last sender report
	reported  map[*description.Media]time.Time          // last sender report sent
	started   time.Time
	packets   int
	dropped   int
}

// startRelay starts a matrixRelay on loopback; it stops at the end of the
// test.
func startRelay(t *testing.T, opts relayOptions) *matrixRelay {
	t.Helper()
	r := &matrixRelay{paths: map[string]*relayPath{}, senderReports: !opts.NoSenderReports}
	methods := []auth.VerifyMethod{auth.VerifyMethodBasic}
	if opts.Auth == "digest" {
		methods = []auth.VerifyMethod{auth.VerifyMethodDigestMD5}
	}
	start := func(tlsConf *tls.Config) (*gortsplib.Server, string) {
		port := testenv.FreePort(t)
		var err error
		for range 20 {
			s := &gortsplib.Server{
				Handler:                  r,
				RTSPAddress:              fmt.Sprintf("127.0.0.1:%d", port),
				TLSConfig:                tlsConf,
				DisableRTCPSenderReports: true,
				AuthMethods:              methods,
				// A keyframe of the matrix clips is a burst of a few
				// hundred packets: a reader must not lose them for want
				// of room here.
				WriteQueueSize: 4096,
			}

			rtpPort := testenv.FreePortPair(t)
			s.UDPRTPAddress, s.UDPRTCPAddress = fmt.Sprintf("127.0.0.1:%d", rtpPort), fmt.Sprintf("127.0.0.1:%d", rtpPort+1)
			if err = s.Start(); err == nil {
				t.Cleanup(s.Close)
				scheme := "rtsp"
				if tlsConf != nil {
					scheme = "rtsps"
				}
				return s, fmt.Sprintf("%s://127.0.0.1:%d", scheme, port)
			}
		}
		t.Fatal(err)
		return nil, ""
	}
	if opts.TLS {
		r.server, r.url = start(loadTLS(t, tlsCert, tlsKey))
		r.pub, r.pubURL = start(nil)
	} else {
		r.server, r.url = start(nil)
		r.pub, r.pubURL = r.server, r.url
	}
	return r
}

// add prepares path name for a publisher.
func (r *matrixRelay) add(name string, opts relayPathOptions) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths[name] = &relayPath{opts: opts}
}

// ready reports whether path name has a publisher.
func (r *matrixRelay) ready(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths[name]
	return p != nil && p.stream != nil
}

func (r *matrixRelay) OnSessionClose(ctx *gortsplib.ServerHandlerOnSessionCloseCtx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.paths {
		if p.stream != nil && ctx.Session == p.publisher {
			p.stream.Close()
			p.stream, p.publisher = nil, nil
		}
	}
}

// reader checks a reader's request of path: 404 when nothing is
// published there, 401 without the credentials of a protected path.
func (r *matrixRelay) reader(conn *gortsplib.ServerConn, req *base.Request, path string) (*base.Response, *gortsplib.ServerStream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths[strings.Trim(path, "/")]
	if p == nil || p.stream == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	if p.opts.Protected && !conn.VerifyCredentials(req, viewerUser, viewerPass) {
		return &base.Response{StatusCode: base.StatusUnauthorized}, nil, liberrors.ErrServerAuth{}
	}
	return &base.Response{StatusCode: base.StatusOK}, p.stream, nil
}

func (r *matrixRelay) OnDescribe(ctx *gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	return r.reader(ctx.Conn, ctx.Request, ctx.Path)
}

func (r *matrixRelay) OnAnnounce(ctx *gortsplib.ServerHandlerOnAnnounceCtx) (*base.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths[strings.Trim(ctx.Path, "/")]
	if p == nil || p.stream != nil {
		return &base.Response{StatusCode: base.StatusBadRequest}, nil
	}
	desc := ctx.Description
	if p.opts.StripParams {
		desc = stripParams(desc)
	}
	st := &gortsplib.ServerStream{Server: r.server, Desc: desc}
	if err := st.Initialize(); err != nil {
		return &base.Response{StatusCode: base.StatusBadRequest}, err
	}
	p.stream, p.publisher, p.started = st, ctx.Session, time.Time{}
	p.medias = map[*description.Media]*description.Media{}
	p.reports = map[*description.Media]rtcp.SenderReport{}
	p.reported = map[*description.Media]time.Time{}
	for i, m := range ctx.Description.Medias {
		p.medias[m] = desc.Medias[i]
	}
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// stripParams returns desc with the parameter sets of its video formats
// left out (the SDP carries no sprop-parameter-sets).
func stripParams(desc *description.Session) *description.Session {
	out := &description.Session{Title: desc.Title, FECGroups: desc.FECGroups}
	for _, m := range desc.Medias {
		nm := *m
		nm.Formats = nil
		for _, f := range m.Formats {
			switch f := f.(type) {
			case *format.H264:
				nm.Formats = append(nm.Formats, &format.H264{PayloadTyp: f.PayloadTyp, PacketizationMode: f.PacketizationMode})
			case *format.H265:
				nm.Formats = append(nm.Formats, &format.H265{PayloadTyp: f.PayloadTyp, MaxDONDiff: f.MaxDONDiff})
			default:
				nm.Formats = append(nm.Formats, f)
			}
		}
		out.Medias = append(out.Medias, &nm)
	}
	return out
}

func (r *matrixRelay) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if ctx.Session.State() == gortsplib.ServerSessionStatePreRecord {
		return &base.Response{StatusCode: base.StatusOK}, nil, nil
	}
	return r.reader(ctx.Conn, ctx.Request, ctx.Path)
}

func (r *matrixRelay) OnPlay(*gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (r *matrixRelay) OnRecord(ctx *gortsplib.ServerHandlerOnRecordCtx) (*base.Response, error) {
	r.mu.Lock()
	p := r.paths[strings.Trim(ctx.Path, "/")]
	r.mu.Unlock()
	if p == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	// The publisher's sender reports, kept to time its packets with. Not
	// gortsplib's ServerSession.PacketNTP: v4.16.2 adds the fraction of
	// the report's NTP time as nanoseconds (a report sent at .9 of a
	// second passes for 2.97 s later), so two tracks' reports sent
	// either side of a second disagreed by up to 3.3 s, a camera whose
	// sound the reports put seconds from its video.
	ctx.Session.OnPacketRTCPAny(func(m *description.Media, pkt rtcp.Packet) {
		if sr, ok := pkt.(*rtcp.SenderReport); ok {
			r.mu.Lock()
			if p.reports != nil {
				p.reports[m] = *sr
			}
			r.mu.Unlock()
		}
	})
	ctx.Session.OnPacketRTPAny(func(m *description.Media, f format.Format, pkt *rtp.Packet) {
		r.mu.Lock()
		st, sm := p.stream, p.medias[m]
		sr, reported := p.reports[m]
		drop := p.drop(time.Now(), m.Type == description.MediaTypeVideo)
		r.mu.Unlock()
		if st == nil || sm == nil || drop {
			return
		}
		// The stream rewrites the SSRC of the packet it is given: a copy,
		// so that the publisher's session keeps its own.
		c := *pkt
		if !reported || f.ClockRate() <= 0 {
			_ = st.WritePacketRTP(sm, &c)
			return
		}
		ntp := packetTime(sr, pkt.Timestamp, f.ClockRate())
		_ = st.WritePacketRTPWithNTP(sm, &c, ntp)
		if !r.senderReports {
			return
		}
		// Sender reports every second, from the publisher's clock (its
		// own reports): the tracks' sync is FFmpeg's, not the relay's.
		r.mu.Lock()
		due := time.Since(p.reported[m]) >= time.Second
		if due {
			p.reported[m] = time.Now()
		}
		r.mu.Unlock()
		if due {
			_ = st.WritePacketRTCP(sm, &rtcp.SenderReport{SSRC: c.SSRC, NTPTime: media.NTPTime(ntp), RTPTime: c.Timestamp})
		}
	})
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// drop decides whether the packet arriving now, of the video or not, is
// lost on the way.
func (p *relayPath) drop(now time.Time, video bool) bool {
	if p.started.IsZero() {
		p.started = now
	}
	p.packets++
	d := false
	if p.opts.DropEvery > 0 && p.packets%p.opts.DropEvery == 0 {
		d = true
	}
	if p.opts.DiscardFor > 0 && (video || !p.opts.DiscardVideoOnly) {
		if since := now.Sub(p.started); since >= p.opts.DiscardAt && since < p.opts.DiscardAt+p.opts.DiscardFor {
			d = true
		}
	}
	if d {
		p.dropped++
	}
	return d
}

// packetTime is the publisher's clock at RTP time ts of a track whose
// clock runs at rate, from the track's sender report sr.
func packetTime(sr rtcp.SenderReport, ts uint32, rate int) time.Time {
	return media.NTPToTime(sr.NTPTime).Add(time.Duration(int32(ts-sr.RTPTime)) * time.Second / time.Duration(rate))
}

// TestRelayPacketTime: the relay times a packet from its track's sender
// report, whatever the fraction of a second the report was sent at
// (gortsplib's PacketNTP put a report sent at .9 s 2.97 s later).
func TestRelayPacketTime(t *testing.T) {
	base := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, frac := range []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond, 900 * time.Millisecond, 999 * time.Millisecond} {
		at := base.Add(frac)
		sr := rtcp.SenderReport{NTPTime: media.NTPTime(at), RTPTime: 4294967000}
		for _, c := range []struct {
			ts   uint32
			rate int
			want time.Duration
		}{
			{4294967000, 90000, 0},
			{90000 - 296, 90000, time.Second},               // past the wrap
			{4294967000 - 3*16000, 16000, -3 * time.Second}, // before the report
		} {
			got := packetTime(sr, c.ts, c.rate).Sub(at)
			if d := got - c.want; d > time.Microsecond || d < -time.Microsecond {
				t.Errorf("report at +%v, ts %d at %d Hz: %v after the report, want %v", frac, c.ts, c.rate, got, c.want)
			}
		}
	}
}
