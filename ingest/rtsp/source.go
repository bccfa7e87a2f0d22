// Package rtsp is the RTSP camera source: a gortsplib client that turns RTP
// into access units with unwrapped timestamps.
package rtsp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

var _ ingest.Source = (*Source)(nil)

// userAgent is sent with every request.
const userAgent = "vigia"

// Source reads one RTSP camera.
type Source struct {
	cam ingest.Camera
	cfg ingest.SourceConfig
	log *zap.Logger

	// OnDecodeError is called for RTP that cannot be decoded. Optional.
	OnDecodeError func(err error)

	// allowed, when set, replaces the address policy of the dial guard
	// (tests use it to let one loopback address through).
	allowed func(netip.Addr) bool

	// reportEvery, when set, replaces the period of RTCP receiver reports
	// of TCP sessions (tests shorten it).
	reportEvery time.Duration
}

// dialer returns the address guard of the camera's connections.
func (s *Source) dialer() dialFunc {
	if s.allowed != nil {
		return ingest.GuardedDialerFunc(s.allowed)
	}
	return ingest.GuardedDialer(s.cfg.AllowPrivateNetworks || s.cam.Trusted)
}

// New returns an RTSP source for cam.
func New(cam ingest.Camera, cfg ingest.SourceConfig, log *zap.Logger) *Source {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Source{cam: cam, cfg: cfg, log: log}
}

// Driver returns an ingest.Driver for rtsp:// and rtsps:// URLs; its
// sources report to onDecodeError (may be nil).
func Driver(log *zap.Logger, onDecodeError func(error)) ingest.Driver {
	return func(cam ingest.Camera, cfg ingest.SourceConfig) (ingest.Source, error) {
		s := New(cam, cfg, log.With(zap.String("camera", cam.ID)))
		s.OnDecodeError = onDecodeError
		return s, nil
	}
}

func (s *Source) transport() (*gortsplib.Transport, error) {
	tr := s.cam.Transport
	if tr == "" {
		tr = s.cfg.DefaultTransport
	}
	switch tr {
	case "", "tcp":
		v := gortsplib.TransportTCP
		return &v, nil
	case "udp":
		v := gortsplib.TransportUDP
		return &v, nil
	case "auto":
		return nil, nil
	}
	return nil, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("unknown transport %q", tr))
}

// Run implements ingest.Source. A TCP camera is read by the lean client of
// this package (tcpSession, runTCP); UDP and automatic transports go
// through gortsplib's client (runClient).
func (s *Source) Run(ctx context.Context, sink ingest.Sink) error {
	u, err := base.ParseURL(s.cam.URL)
	if err != nil {
		return ingest.Permanent(ingest.ReasonBadURL, errors.New("url does not parse"))
	}
	if u.Scheme != "rtsp" && u.Scheme != "rtsps" {
		return ingest.Permanent(ingest.ReasonBadURL, ingest.ErrUnsupportedScheme)
	}
	tr, err := s.transport()
	if err != nil {
		return err
	}
	// Over rtsps, automatic transport plays over TCP: the media come
	// inside the TLS connection, as secure as SRTP over UDP, whose key
	// exchange (MIKEY) gortsplib's client cannot make with every server.
	if tr == nil && u.Scheme == "rtsps" || tr != nil && *tr == gortsplib.TransportTCP {
		return s.runTCP(ctx, u, sink)
	}
	return s.runClient(ctx, u, tr, sink)
}

// runTCP plays the camera over its RTSP connection with the lean client.
func (s *Source) runTCP(ctx context.Context, u *base.URL, sink ingest.Sink) error {
	ses := &tcpSession{
		timeout:     s.cfg.ReadTimeout,
		userAgent:   userAgent,
		dial:        newRedirectGuard(u, s.dialer()).DialContext,
		reportEvery: s.reportEvery,
	}
	stop := context.AfterFunc(ctx, ses.stop)
	defer stop()
	defer ses.close()

	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return classify(err)
	}
	desc, err := ses.handshake(ctx, u)
	if err != nil {
		return fail(err)
	}
	r, err := newReader(desc, s.cam.Sound)
	if err != nil {
		return err
	}
	r.sink = sink
	r.onDecodeError = s.OnDecodeError
	if err := sink.Tracks(r.tracks); err != nil {
		return ingest.Permanent(ingest.ReasonUnsupported, err)
	}
	if err := r.makeHandlers(); err != nil {
		return err
	}
	channels, err := ses.setup(desc.BaseURL, r.medias)
	if err != nil {
		return fail(err)
	}
	r.lastUnit.Store(time.Now().UnixNano())
	if err := ses.play(); err != nil {
		return fail(err)
	}
	err = ses.playLoop(r, channels)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, ingest.ErrReadTimeout) {
		return err
	}
	return classify(err)
}

// runClient plays the camera with gortsplib's client (UDP, or automatic
// transport: UDP first, TCP when no UDP packet arrives).
func (s *Source) runClient(ctx context.Context, u *base.URL, tr *gortsplib.Transport, sink ingest.Sink) error {
	// Errors and losses that gortsplib reports go to the camera's count
	// (not to gortsplib's own log).
	var cur atomic.Pointer[reader]
	cur.Store(&reader{onDecodeError: s.OnDecodeError})
	c := &gortsplib.Client{
		Scheme:       u.Scheme,
		Host:         u.Host,
		ReadTimeout:  s.cfg.ReadTimeout,
		WriteTimeout: s.cfg.ReadTimeout,
		Transport:    tr,
		DialContext:  withReadBuffer(newRedirectGuard(u, s.dialer()).DialContext),
		UserAgent:    userAgent,

		UDPReadBufferSize: udpReadBuffer(),
	}
	c.OnResponse = guardSource(s.addressAllowed, s.log)
	c.OnDecodeError = func(err error) { cur.Load().decodeError(err) }
	c.OnPacketsLost = func(n uint64) { cur.Load().decodeError(fmt.Errorf("%w (%d)", errPacketLost, n)) }
	if err := c.Start2(); err != nil {
		return classify(err)
	}
	defer c.Close()

	stop := context.AfterFunc(ctx, c.Close)
	defer stop()

	desc, _, err := c.Describe(u)
	if err != nil {
		return classify(err)
	}
	r, err := newReader(desc, s.cam.Sound)
	if err != nil {
		return err
	}
	r.sink = sink
	r.onDecodeError = s.OnDecodeError
	cur.Store(r)
	if err := sink.Tracks(r.tracks); err != nil {
		return ingest.Permanent(ingest.ReasonUnsupported, err)
	}
	if err := r.makeHandlers(); err != nil {
		return err
	}
	for _, m := range r.medias {
		if _, err := c.Setup(desc.BaseURL, m, 0, 0); err != nil {
			if u.Scheme == "rtsps" && ctx.Err() == nil {
				if _, ok := ingest.IsPermanent(classify(err)); !ok {
					// SRTP's keys (MIKEY) not understood.
					return ingest.Permanent(ingest.ReasonTransport, fmt.Errorf("secure rtp over udp: %w (use transport tcp)", err))
				}
			}
			return classify(err)
		}
	}
	r.lastUnit.Store(time.Now().UnixNano())
	for i, m := range r.medias {
		h := r.handlers[i]
		c.OnPacketRTCP(m, func(pkt rtcp.Packet) {
			if sr, ok := pkt.(*rtcp.SenderReport); ok {
				r.senderReport(i, sr.NTPTime, sr.RTPTime)
			}
		})
		c.OnPacketRTP(m, r.formats[i], func(pkt *rtp.Packet) {
			r.guard(c, func() {
				p := fromPion(pkt)
				h.packet(&p, time.Now())
			})
		})
	}
	if _, err := c.Play(nil); err != nil {
		return classify(err)
	}

	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t := time.NewTicker(s.cfg.ReadTimeout / 4)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if perr := r.panicErr(); perr != nil {
				return perr
			}
			return classify(err)
		case <-t.C:
			if r.idleFor() > s.cfg.ReadTimeout {
				c.Close()
				<-done
				return ingest.ErrReadTimeout
			}
		}
	}
}

// udpReadBufferMax is the socket receive buffer asked for UDP cameras: a
// keyframe of a few hundred kilobytes arrives as one burst of packets, more
// than the usual default of 208 KiB holds.
const udpReadBufferMax = 1 << 20

// udpReadBuffer is udpReadBufferMax within the system's limit
// (net.core.rmem_max; gortsplib refuses a size the system does not grant),
// or 0 (the system default) when the limit cannot be read.
func udpReadBuffer() int {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0
	}
	return min(n, udpReadBufferMax)
}

// classify maps gortsplib errors to ingest errors.
func classify(err error) error {
	if untrustedCert(err) {
		return ingest.Permanent(ingest.ReasonTLS, err)
	}
	if errors.Is(err, errNotTCP) {
		return ingest.Permanent(ingest.ReasonTransport, err)
	}
	var sdpErr liberrors.ErrClientSDPInvalid
	if errors.As(err, &sdpErr) {
		// Not a session Vigia can read, whatever the retries.
		return ingest.Permanent(ingest.ReasonUnsupported, err)
	}
	var bad liberrors.ErrClientBadStatusCode
	if errors.As(err, &bad) {
		switch bad.Code {
		case base.StatusUnauthorized, base.StatusForbidden:
			return ingest.Permanent(ingest.ReasonAuth, err)
		case base.StatusNotFound:
			return ingest.Permanent(ingest.ReasonNotFound, err)
		}
	}
	if _, ok := ingest.IsPermanent(err); ok {
		return err
	}
	return err
}

// reader turns one session's RTP into units.
type reader struct {
	medias   []*description.Media
	formats  []format.Format
	tracks   []*media.Track
	handlers []packetHandler // per track

	sink          ingest.Sink // never waits (ingest.Sink): called by the reading goroutine
	onDecodeError func(error)

	mu        sync.Mutex
	panicked  error
	lastUnit  atomic.Int64
	errsSince atomic.Int64 // decode errors since the last unit

	clockMu sync.Mutex
	times   timeline     // RTP timestamps → one time axis
	clock   ingest.Clock // that axis → local clock (jumps, rate)
	// The track other than the video whose arrivals witness the camera's
	// clock rate (ingest.Clock.Other), 0 before one; and the moves of the
	// timeline's other tracks the clock was told of.
	witness int
	moves   int
}

func (r *reader) idleFor() time.Duration {
	return time.Since(time.Unix(0, r.lastUnit.Load()))
}

func (r *reader) panicErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.panicked
}

// videoTicks puts the RTP timestamp of a video frame that arrived at now
// on the session's time axis (90 kHz ticks, camera jumps absorbed:
// timeline).
func (r *reader) videoTicks(ts uint32, now time.Time) int64 {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.times.videoTicks(ts, now)
}

// videoTimes maps a video frame's presentation and decoding times (ticks
// of the session's axis) through the session's clock: anchored to the
// local clock at the first frame, so a camera's wrong clock never
// misplaces recordings, with its rate corrected (ingest.Clock). The clock
// follows the decoding times, which arrive in order and in step with the
// camera's sending; presentation times of B-frames go back and forth by a
// few frames and would pass for a wrong rate. It returns the output times
// and the wall time of the decoding time.
func (r *reader) videoTimes(pts, dts int64, now time.Time) (opts, odts time.Duration, wall time.Time) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	r.times.videoDecoded(dts, now)
	odts = r.clock.Video(ticksToDuration(dts, 90000), now)
	opts = r.clock.Map(ticksToDuration(pts, 90000))
	return opts, odts, r.clock.Wall(odts)
}

// otherTime maps a timestamp of another track, whose clock runs at rate,
// with the video's mapping. The first such track's arrivals are the
// clock's second witness of the camera's rate (ingest.Clock.Other). Before
// the first video frame it reports ok false.
func (r *reader) otherTime(idx int, ts uint32, rate int, now time.Time) (time.Duration, time.Time, bool) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	if !r.clock.Started() || !r.times.started() {
		return 0, time.Time{}, false
	}
	pts := ticksToDuration(r.times.otherTicks(idx, ts, rate, now), rate)
	if r.witness == 0 {
		r.witness = idx
	}
	if r.times.moves != r.moves {
		r.moves = r.times.moves
		r.clock.OtherMoved(now)
	}
	var o time.Duration
	if idx == r.witness {
		o = r.clock.Other(pts, now)
	} else {
		o = r.clock.Map(pts)
	}
	return o, r.clock.Wall(o), true
}

// senderReport notes a sender report of track idx: the camera's clock
// (NTP) at an RTP time of the track. The reports of the video track (the
// first, newReader) and of another track put that track on the video's
// axis (timeline.otherTicks).
func (r *reader) senderReport(idx int, ntp uint64, rtpTime uint32) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	r.times.senderReport(idx, ntp, rtpTime)
}

// guard runs f, turning a panic into the end of c's session.
func (r *reader) guard(c *gortsplib.Client, f func()) {
	defer func() {
		if v := recover(); v != nil {
			r.mu.Lock()
			if r.panicked == nil {
				r.panicked = fmt.Errorf("%w: %v", errPanic, v)
			}
			r.mu.Unlock()
			go c.Close()
		}
	}()
	f()
}

func (r *reader) decodeError(err error) {
	r.errsSince.Add(1)
	if r.onDecodeError != nil {
		r.onDecodeError(err)
	}
}

// makeHandlers builds the packet handler of each track.
func (r *reader) makeHandlers() error {
	r.handlers = make([]packetHandler, len(r.formats))
	for i, f := range r.formats {
		switch f := f.(type) {
		case *format.H264:
			if f.PacketizationMode >= 2 {
				return ingest.Permanent(ingest.ReasonUnsupported, errors.New("h264 interleaved packetization (mode 2) is not supported"))
			}
			sps, pps := f.SafeParams()
			r.handlers[i] = newVideoTrack(r, i, h264Codec(sps, pps))
		case *format.H265:
			if f.MaxDONDiff != 0 {
				return ingest.Permanent(ingest.ReasonUnsupported, errors.New("h265 with decoding order numbers (sprop-max-don-diff) is not supported"))
			}
			vps, sps, pps := f.SafeParams()
			r.handlers[i] = newVideoTrack(r, i, h265Codec(vps, sps, pps))
		default:
			h, err := newAudioHandler(r, i, f)
			if err != nil {
				return err
			}
			r.handlers[i] = h
		}
	}
	return nil
}

// durationToTicks converts d to ticks of rate per second, rounding down.
func durationToTicks(d time.Duration, rate int) int64 {
	sec := int64(d / time.Second)
	rem := int64(d % time.Second)
	return sec*int64(rate) + rem*int64(rate)/int64(time.Second)
}

func ticksToDuration(t int64, rate int) time.Duration {
	sec := t / int64(rate)
	rem := t % int64(rate)
	return time.Duration(sec)*time.Second + time.Duration(rem)*time.Second/time.Duration(rate)
}

// floodErrors is the number of decode errors between two units past which
// the second one does not count as the camera being alive: a camera that
// sends mostly garbage, with a valid-looking unit now and then, is
// disconnected by the read timeout like one that sends nothing.
const floodErrors = 50

// deliver hands a unit to the sink; now is the arrival of its last
// packet.
func (r *reader) deliver(u *media.Unit, now time.Time) {
	if r.errsSince.Swap(0) < floodErrors {
		r.lastUnit.Store(now.UnixNano())
	}
	r.sink.Unit(u)
}

// untrustedCert reports whether err is an rtsps camera's certificate that
// does not verify: not issued by a trusted authority, for another name,
// expired. Retrying will not fix it; trusting the camera's authority
// (SSL_CERT_FILE, SSL_CERT_DIR) or a new certificate will.
func untrustedCert(err error) bool {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify)
}
