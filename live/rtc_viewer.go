package live

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/vigia/vigia/media"
	vstream "github.com/vigia/vigia/stream"
)

// viewer is one WebRTC session: a peer connection sending one camera's
// video. Its goroutine (run) joins the camera's hub once the connection is
// up and writes the frames the hub queues for it; it ends when the token
// expires unrenewed, the connection fails or closes, the session is
// deleted or the camera stops here.
type viewer struct {
	w      *WebRTC
	id     string
	camera string
	keys   sessionKeys // what it counts under (WebRTC.add)
	codec  media.Codec
	hub    *hub
	pc     *webrtc.PeerConnection
	track  *rtcTrack
	log    *zap.Logger

	secrets dtlsSecrets // the session's DTLS handshake reports here

	// How the session's packets leave (findPath), used by run's
	// goroutine only: sealed by the node and sent on via's socket, or
	// (via nil) through pion. A session's packets are sealed by one side
	// only, as the SRTP rollover counter lives there: once through pion,
	// always; once sealed, the session ends if its packets would have to
	// go through pion.
	seal   *sealer
	via    *sighting
	byPion bool        // a packet went through pion
	noSeal bool        // the node's key could not be had: pion seals
	repath atomic.Bool // the selected candidate pair changed

	q *vstream.Queue[*frame] // the frames the hub offered, for run

	// Guarded by hub.mu (offer runs under it).
	waitKey bool // send nothing before a keyframe (start, new run)

	exp       atomic.Int64  // unix seconds: the newest token's expiry
	renewed   chan struct{} // signalled when exp moves
	connected chan struct{} // closed when the connection is up
	connOnce  sync.Once
	quit      chan struct{} // closed by stop
	stopOnce  sync.Once
	done      chan struct{} // closed when run has returned

	frames  atomic.Uint64 // frames written
	dropped atomic.Uint64 // frames lost to a full queue
	sealedN atomic.Uint64 // packets sealed by the node

	release func() // ends its use of a camera's H.264 rendition and audio transcoder; nil for none

	// Sound: the camera's Opus (rtc_audio.go) or its G.711 as it came
	// (rtc_g711.go); audio nil without.
	audio     *rtcTrack
	ahub      *audioHub
	pass      *g711Pass
	passCodec media.Codec
	aq        chan *audioPacket // the packets offered, for run

	// What the session sent of each track, for its sender reports; used
	// by run's goroutine only.
	sentVideo, sentAudio sent
}

// sent is what a session sent of one track: its packets and payload
// octets, and the RTP timestamp and wall-clock time of the last.
type sent struct {
	packets, octets uint32
	ts              uint32
	ntp             time.Time
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newViewer(w *WebRTC, st *stream, codec media.Codec, exp time.Time) *viewer {
	v := &viewer{
		w: w, id: newSessionID(), camera: st.camera, codec: codec, hub: st.hub,
		q:         vstream.NewQueue(vstream.QueueConfig[*frame]{Size: w.cfg.ViewerQueue}),
		renewed:   make(chan struct{}, 1),
		connected: make(chan struct{}),
		quit:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	v.log = st.log.With(zap.String("proto", "webrtc"), zap.String("session", v.id[:8]))
	v.exp.Store(exp.Unix())
	return v
}

// offer queues f for the viewer without blocking; the hub calls it under
// its lock. Frames before the first keyframe (of the session, of a run)
// are not sent; a frame that finds the queue full is dropped and counted,
// and so are the frames after it up to the next keyframe.
func (v *viewer) offer(f *frame) {
	if v.waitKey {
		if !f.key {
			return
		}
		v.waitKey = false
	}
	kind := vstream.Delta
	if f.key {
		kind = vstream.Keyframe
	}
	if v.q.Put(f, kind, 0) != vstream.Queued {
		v.dropped.Add(1)
		v.w.dropped.Inc()
	}
}

// renew moves the session's end to exp, when later.
func (v *viewer) renew(exp time.Time) {
	for {
		old := v.exp.Load()
		if exp.Unix() <= old {
			return
		}
		if v.exp.CompareAndSwap(old, exp.Unix()) {
			break
		}
	}
	select {
	case v.renewed <- struct{}{}:
	default:
	}
}

func (v *viewer) setConnected() { v.connOnce.Do(func() { close(v.connected) }) }

// stop asks run to end; it does not wait.
func (v *viewer) stop() { v.stopOnce.Do(func() { close(v.quit) }) }

// close ends the session and waits for its goroutine.
func (v *viewer) close() {
	v.stop()
	<-v.done
}

// run is the session's goroutine; see viewer. It closes the peer
// connection and unregisters the session when it returns.
func (v *viewer) run() {
	defer close(v.done)
	defer v.releaseRendition()
	defer v.w.remove(v)
	defer func() { _ = v.pc.Close() }()
	expiry := time.NewTimer(time.Until(time.Unix(v.exp.Load(), 0)))
	defer expiry.Stop()
	connect := time.NewTimer(v.w.cfg.ConnectTimeout)
	select {
	case <-v.connected:
		connect.Stop()
	case <-connect.C:
		v.log.Debug("webrtc session not connected in time")
		return
	case <-expiry.C:
		return
	case <-v.quit:
		return
	}
	if err := v.findPath(); err != nil {
		v.log.Debug("webrtc session has no way out", zap.Error(err))
		return
	}
	v.logConnected()
	if !v.hub.join(v) {
		return // the camera's codec changed meanwhile
	}
	defer v.hub.leave(v)
	if v.ahub != nil {
		v.ahub.join(v)
		defer v.ahub.leave(v)
	}
	if v.pass != nil {
		v.pass.join(v)
		defer v.pass.leave(v)
	}
	reports := time.NewTicker(senderReportInterval)
	defer reports.Stop()
	var batch []vstream.Entry[*frame]
	for {
		select {
		case p := <-v.aq:
			if err := v.audio.WriteRTP(p.pkt); err != nil {
				v.log.Debug("webrtc audio write failed", zap.Error(err))
				return
			}
			v.sentAudio.add(p.pkt, p.ntp)
		case <-reports.C:
			v.sendReports()
		case <-v.q.Ready():
			batch = v.q.Poll(batch[:0])
			for _, e := range batch {
				// A frame in hand leaves the queue, as one received from
				// a channel would.
				v.q.Done()
				if v.w.hookWrite != nil {
					v.w.hookWrite(v.id)
				}
				if err := v.write(e.Value); err != nil {
					v.log.Debug("webrtc write failed", zap.Error(err))
					return
				}
				v.frames.Add(1)
				for _, p := range e.Value.pkts {
					v.sentVideo.add(p, e.Value.ntp)
				}
			}
			clear(batch)
		case <-v.renewed:
			expiry.Reset(time.Until(time.Unix(v.exp.Load(), 0)))
		case <-expiry.C:
			if left := time.Until(time.Unix(v.exp.Load(), 0)); left > 0 {
				expiry.Reset(left)
				continue
			}
			v.log.Debug("webrtc session token expired")
			return
		case <-v.quit:
			return
		}
	}
}

// write sends f's packets, sealed by the node (writeSealed) or through
// pion, which seals each and sends it alone.
func (v *viewer) write(f *frame) error {
	if v.repath.Load() {
		if err := v.findPath(); err != nil {
			return err
		}
	}
	if v.via != nil {
		return v.writeSealed(f)
	}
	v.byPion = true
	for _, p := range f.pkts {
		if err := v.track.WriteRTP(p); err != nil {
			return err
		}
	}
	v.w.sealedByPion.Add(float64(len(f.pkts)))
	return nil
}

// writeSealed seals f's packets straight into runs of datagrams and sends
// each run in one system call, on the socket and to the address pion uses
// for the session. A failed send is logged, as a lost packet would be;
// the session goes on.
func (v *viewer) writeSealed(f *frame) error {
	g, s := v.via, v.seal
	var r run
	defer r.release()
	for _, p := range f.pkts {
		b, err := r.put(g.conn, g.dst, s.size(p))
		if err != nil {
			v.log.Debug("webrtc send failed", zap.Error(err))
		}
		if err := s.seal(b, p); err != nil {
			return err
		}
	}
	if err := r.send(); err != nil {
		v.log.Debug("webrtc send failed", zap.Error(err))
	}
	v.sealedN.Add(uint64(len(f.pkts)))
	v.w.sealedByNode.Add(float64(len(f.pkts)))
	return nil
}

// findPath decides how the session's packets leave. When pion's write for
// the session ends on one of the node's batched UDP sockets (a host or
// server-reflexive candidate; not a TURN relay, not ICE-TCP) and the
// node has the session's SRTP key, the node seals the packets itself and
// sends them on that socket to that address; else they go through pion.
// It is called once connected and again after the selected candidate
// pair changes.
func (v *viewer) findPath() error {
	v.repath.Store(false)
	v.via = nil
	b := v.w.batch
	if b == nil || v.byPion || v.noSeal {
		return nil
	}
	ssrc, pt := v.track.binding()
	b.watch(ssrc)
	err := v.pc.WriteRTCP([]rtcp.Packet{&rtcp.ReceiverReport{SSRC: ssrc}})
	g := b.unwatch(ssrc)
	if err == nil && g != nil && v.seal == nil {
		if v.w.hookSecrets != nil {
			v.w.hookSecrets(&v.secrets)
		}
		v.seal, err = newSealer(&v.secrets, ssrc, pt)
		v.secrets.forget()
		if err == nil {
			err = v.seal.check(g.pkt)
		}
		if err != nil {
			v.log.Info("webrtc: the session's packets go through pion", zap.Error(err))
			v.seal, v.noSeal = nil, true
			return nil
		}
	}
	switch {
	case g != nil && v.seal != nil:
		v.via = g
		return nil
	case v.sealedN.Load() > 0:
		if err == nil {
			err = errors.New("the selected candidate pair left the node's UDP sockets")
		}
		return fmt.Errorf("session sealed by the node cannot go on: %w", err)
	}
	return nil
}

// logConnected logs, at debug level, the session's candidate pair, SRTP
// protection profile (the node's settings prefer AEAD_AES_128_GCM) and
// who seals its packets.
func (v *viewer) logConnected() {
	if !v.log.Core().Enabled(zapcore.DebugLevel) {
		return
	}
	var srtp, pair string
	for _, s := range v.pc.GetStats() {
		if ts, ok := s.(webrtc.TransportStats); ok {
			srtp = ts.SRTPCipher
		}
	}
	if p, err := v.pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair(); err == nil && p != nil {
		pair = p.String()
	}
	v.log.Debug("webrtc session connected", zap.String("pair", pair), zap.String("srtp", srtp),
		zap.Bool("sealed_by_node", v.via != nil))
}

// rtcTrack is a session's video track: pion's, noting the SSRC and
// payload type the session's sender binds it with.
type rtcTrack struct {
	*webrtc.TrackLocalStaticRTP
	mu   sync.Mutex
	ssrc uint32
	pt   uint8
}

func newRTCTrack(codec media.Codec) (*rtcTrack, error) {
	return newTrack(trackCapability(codec), "video")
}

// newTrack returns a track of capability c named id. A session's tracks
// share one stream id: the browser plays them as one stream, and keeps
// its audio and video in sync by the sender reports.
func newTrack(c webrtc.RTPCodecCapability, id string) (*rtcTrack, error) {
	t, err := webrtc.NewTrackLocalStaticRTP(c, id, "vigia")
	if err != nil {
		return nil, err
	}
	return &rtcTrack{TrackLocalStaticRTP: t}, nil
}

// Bind is pion's, noting the binding.
func (t *rtcTrack) Bind(c webrtc.TrackLocalContext) (webrtc.RTPCodecParameters, error) {
	p, err := t.TrackLocalStaticRTP.Bind(c)
	if err == nil {
		t.mu.Lock()
		t.ssrc, t.pt = uint32(c.SSRC()), uint8(p.PayloadType)
		t.mu.Unlock()
	}
	return p, err
}

func (t *rtcTrack) binding() (ssrc uint32, pt uint8) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ssrc, t.pt
}

// readRTCP drains the sender's RTCP (receiver reports, PLI) until the
// connection closes; nothing acts on it.
func readRTCP(s *webrtc.RTPSender) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := s.Read(buf); err != nil {
			return
		}
	}
}

// senderReportInterval is how often a session sends a sender report of
// each of its tracks. A browser syncs audio and video once it has two of
// each (libwebrtc's RTP to NTP estimator).
const senderReportInterval = time.Second

func (s *sent) add(p *rtp.Packet, ntp time.Time) {
	s.packets++
	s.octets += uint32(len(p.Payload))
	s.ts, s.ntp = p.Timestamp, ntp
}

// report returns the sender report of s for ssrc; nil before a packet.
func (s *sent) report(ssrc uint32) rtcp.Packet {
	if s.packets == 0 {
		return nil
	}
	return &rtcp.SenderReport{SSRC: ssrc, NTPTime: media.NTPTime(s.ntp), RTPTime: s.ts,
		PacketCount: s.packets, OctetCount: s.octets}
}

// sendReports sends, through pion, a sender report of each track the
// session has sent packets of: the RTP timestamp of the last packet with
// its wall-clock time (runClock), the same clock for audio and video, by
// which the browser syncs them (lip sync). Without reports a browser
// plays each track as it comes.
func (v *viewer) sendReports() {
	var pkts []rtcp.Packet
	ssrc, _ := v.track.binding()
	if r := v.sentVideo.report(ssrc); r != nil {
		pkts = append(pkts, r)
	}
	if v.audio != nil {
		ssrc, _ := v.audio.binding()
		if r := v.sentAudio.report(ssrc); r != nil {
			pkts = append(pkts, r)
		}
	}
	if len(pkts) == 0 {
		return
	}
	if err := v.pc.WriteRTCP(pkts); err != nil {
		v.log.Debug("webrtc sender report not sent", zap.Error(err))
	}
}
