package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/transport/v5"
	"github.com/pion/transport/v5/stdnet"
	"github.com/pion/webrtc/v4"
)

// ViewersReport is what RunWHEPViewers prints when its window ends.
type ViewersReport struct {
	Viewers   int `json:"viewers"`
	Connected int `json:"connected"`
	// Frames is the frames (RTP marker bits) each viewer received in the
	// window; LostPackets the packets missing from their sequence.
	Frames      []int64 `json:"frames"`
	LostPackets int64   `json:"lost_packets"`
}

// connectedLine is printed by RunWHEPViewers once every viewer received a
// first frame: the measured window starts there.
const connectedLine = "vigia viewers connected"

// wheper is one WebRTC viewer of RunWHEPViewers.
type wheper struct {
	pc      *webrtc.PeerConnection
	frames  atomic.Int64
	lost    atomic.Int64
	first   chan struct{}
	firstMu sync.Once
	count   atomic.Bool // count frames (inside the window)
}

// RunWHEPViewers connects one WebRTC viewer to each WHEP address of urls
// (loopback), waits until each receives a frame (at most 30 s), prints
// connectedLine, receives for window and prints a ViewersReport as JSON.
// It is the viewers' side of the bench's WebRTC measure, run as a process
// of its own so that their cost is not counted as the recorder's. With
// gro, their sockets take the node's runs of datagrams whole where the
// kernel can (groConn), so that loopback charges the node for as little
// of their receiving as a viewer on another machine would.
func RunWHEPViewers(ctx context.Context, urls []string, window time.Duration, gro bool, out io.Writer) error {
	me := &webrtc.MediaEngine{}
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
		SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"}, PayloadType: 96},
		webrtc.RTPCodecTypeVideo); err != nil {
		return err
	}
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType: webrtc.MimeTypeH265, ClockRate: 90000}, PayloadType: 97}, webrtc.RTPCodecTypeVideo); err != nil {
		return err
	}
	var se webrtc.SettingEngine
	se.SetInterfaceFilter(func(n string) bool { return n == "lo" })
	se.SetIncludeLoopbackCandidate(true)
	// No mDNS: the viewers are on the node's machine, and pion's mDNS
	// reader needs its socket to be a *net.UDPConn, not a groConn.
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	n, err := stdnet.NewNet()
	if err != nil {
		return err
	}
	se.SetNet(viewerNet{Net: n, gro: gro})
	api := webrtc.NewAPI(webrtc.WithMediaEngine(me), webrtc.WithSettingEngine(se),
		webrtc.WithInterceptorRegistry(&interceptor.Registry{}))
	vs := make([]*wheper, 0, len(urls))
	defer func() {
		for _, v := range vs {
			_ = v.pc.Close()
		}
	}()
	for _, u := range urls {
		v, err := dialWHEP(ctx, api, u)
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	connected := 0
	for _, v := range vs {
		select {
		case <-v.first:
			connected++
		case <-deadline.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, v := range vs {
		v.frames.Store(0)
		v.lost.Store(0)
		v.count.Store(true)
	}
	fmt.Fprintln(out, connectedLine)
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return ctx.Err()
	}
	rep := ViewersReport{Viewers: len(vs), Connected: connected}
	for _, v := range vs {
		v.count.Store(false)
		rep.Frames = append(rep.Frames, v.frames.Load())
		rep.LostPackets += v.lost.Load()
	}
	return json.NewEncoder(out).Encode(rep)
}

// viewerReadBuffer is the receive buffer of each viewer's socket: a
// keyframe (up to a few hundred packets) arrives at once on loopback, and
// the default (208 KiB, about 90 packets) overflows while 100 viewers
// share two cores, counting the machine's drops as the node's losses. The
// kernel caps it at net.core.rmem_max.
const viewerReadBuffer = 4 << 20

// viewerNet is pion's standard network with viewerReadBuffer on every
// UDP socket and, with gro, the sockets taking runs whole (groConn).
type viewerNet struct {
	*stdnet.Net
	gro bool
}

func (n viewerNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := n.Net.ListenUDP(network, laddr)
	if err == nil {
		_ = c.SetReadBuffer(viewerReadBuffer)
		if uc, ok := c.(*net.UDPConn); ok && n.gro {
			if g := newGROConn(uc); g != nil {
				return g, nil
			}
		}
	}
	return c, err
}

func dialWHEP(ctx context.Context, api *webrtc.API, target string) (*wheper, error) {
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	v := &wheper{pc: pc, first: make(chan struct{})}
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo,
		webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		return nil, err
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go v.read(tr) })
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		return nil, err
	}
	<-gathered
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(pc.LocalDescription().SDP))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/sdp")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		_ = pc.Close()
		return nil, fmt.Errorf("WHEP %d: %s", res.StatusCode, strings.TrimSpace(string(body)))
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: string(body)}); err != nil {
		_ = pc.Close()
		return nil, err
	}
	return v, nil
}

// read counts frames and lost packets until the track ends.
func (v *wheper) read(tr *webrtc.TrackRemote) {
	var next uint16
	started := false
	for {
		p, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		if started && p.SequenceNumber != next && v.count.Load() {
			v.lost.Add(int64(p.SequenceNumber - next))
		}
		started, next = true, p.SequenceNumber+1
		if p.Marker {
			if v.count.Load() {
				v.frames.Add(1)
			}
			v.firstMu.Do(func() { close(v.first) })
		}
	}
}
