package live

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/audio/transcode"
	"github.com/vigia/vigia/media"
)

// Sizes of the audio queues: the AAC frames queued for a camera's audio
// transcoder, and the Opus packets queued for one viewer. Past either,
// what finds no room is dropped (counted): neither the camera's pipeline
// nor the transcoder waits.
const (
	audioUnitQueue   = 64
	viewerAudioQueue = 32
)

// defaultAudioTranscodeMax is WebRTCConfig.AudioTranscodeMax's default.
const defaultAudioTranscodeMax = 64

// errAudioFull is why a viewer gets no sound past the node's bound.
var errAudioFull = errors.New("audio transcode capacity reached")

// opusCapability is the codec of the audio track sent: Opus, 48 kHz, two
// channels as RFC 7587 signals it (the node sends mono).
var opusCapability = webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2,
	SDPFmtpLine: "minptime=10;useinbandfec=1"}

// registerAudioCodecs registers the audio codecs the node sends: Opus,
// PCMU and PCMA.
func registerAudioCodecs(me *webrtc.MediaEngine) error {
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: opusCapability, PayloadType: 111},
		webrtc.RTPCodecTypeAudio); err != nil {
		return err
	}
	return registerG711(me)
}

// runClock maps a camera's presentation times to wall-clock times the same
// way for its audio and its video, the times its sender reports give
// (lip sync): the start of the camera's run plus the PTS, which the
// tracks of a run share.
type runClock struct {
	epoch atomic.Int64 // unix ns of PTS 0 of the current run
}

// newRun starts a run of the camera now.
func (c *runClock) newRun() { c.epoch.Store(time.Now().UnixNano()) }

// at returns the wall-clock time of pts in the current run.
func (c *runClock) at(pts time.Duration) time.Time {
	return time.Unix(0, c.epoch.Load()).Add(pts)
}

// audioPacket is one Opus packet for every audio viewer of a camera,
// shared and never modified once built, with the wall-clock time of its
// RTP timestamp.
type audioPacket struct {
	pkt *rtp.Packet
	ntp time.Time
}

// audioTranscodes bounds and counts the audio transcoders of a node: one
// per camera whose audio WebRTC viewers hear, whatever their number.
type audioTranscodes struct {
	max     int
	running atomic.Int32
	cpu     atomic.Int64 // ns of CPU the transcoders spent in libavcodec

	refused prometheus.Counter
	dropped prometheus.Counter
	failed  prometheus.Counter
	active  prometheus.GaugeFunc
	cpuSecs prometheus.CounterFunc
}

func newAudioTranscodes(max int) *audioTranscodes {
	a := &audioTranscodes{max: max,
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_audio_transcode_refused_total", Help: "WebRTC viewers sent the video without sound because the node transcoded the audio of its bound of cameras already."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_audio_dropped_total", Help: "Audio frames the live audio transcoder could not keep up with, or Opus packets not sent to a WebRTC viewer whose queue was full (recording is not affected)."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_audio_transcode_errors_total", Help: "AAC frames the live audio transcoder failed to decode or encode to Opus."}),
	}
	a.active = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vigia_live_audio_transcodes", Help: "Cameras whose AAC audio is transcoded to Opus for WebRTC viewers now."},
		func() float64 { return float64(a.running.Load()) })
	a.cpuSecs = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "vigia_live_audio_transcode_cpu_seconds_total", Help: "CPU time the live audio transcoders spent decoding AAC, resampling and encoding Opus."},
		func() float64 { return time.Duration(a.cpu.Load()).Seconds() })
	return a
}

func (a *audioTranscodes) collectors() []prometheus.Collector {
	return []prometheus.Collector{a.refused, a.dropped, a.failed, a.active, a.cpuSecs}
}

// admit takes a place for one more transcoder; false past the bound.
func (a *audioTranscodes) admit() bool {
	for {
		n := a.running.Load()
		if int(n) >= a.max {
			a.refused.Inc()
			return false
		}
		if a.running.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// audioHub is a camera's audio for its WebRTC viewers: the pipeline
// goroutine calls tracks and unit (through the stream); while viewers
// listen, a transcoder (audioTranscoder) turns the AAC of the camera's
// run into Opus, packetized once and offered to every viewer, which
// queues it without blocking or drops it. With no listener a unit costs
// one atomic load.
type audioHub struct {
	clock *runClock
	log   *zap.Logger

	tap atomic.Pointer[audioTranscoder] // the running transcoder, nil for none

	mu      sync.Mutex
	track   *media.Track // the AAC track of the current run, nil for none
	idx     int          // its index, -1 for none
	tr      *audioTranscoder
	users   int
	viewers []*viewer
}

func newAudioHub(clock *runClock, log *zap.Logger) *audioHub {
	return &audioHub{clock: clock, log: log, idx: -1}
}

// tracks starts a new run: its first AAC track is the one sent.
func (a *audioHub) tracks(tracks []*media.Track) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.track, a.idx = nil, -1
	for i, t := range tracks {
		if t.Codec == media.AAC && t.AAC != nil {
			a.track, a.idx = t, i
			break
		}
	}
}

// hasAudio reports whether the current run has audio the node can send.
func (a *audioHub) hasAudio() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.track != nil
}

// unit hands an audio unit of the current run to the transcoder while one
// runs; it never blocks.
func (a *audioHub) unit(u *media.Unit) {
	tr := a.tap.Load()
	if tr == nil {
		return
	}
	a.mu.Lock()
	track, idx := a.track, a.idx
	a.mu.Unlock()
	if u.Track != idx || track == nil {
		return
	}
	tr.offer(track, u)
}

// acquire returns the camera's transcoder for one more viewer, starting it
// when none listens yet; past the node's bound it fails with
// errAudioFull. The viewer calls release once when it leaves.
func (a *audioHub) acquire(at *audioTranscodes) (*audioTranscoder, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tr != nil {
		a.users++
		return a.tr, nil
	}
	if !at.admit() {
		return nil, fmt.Errorf("%w: %d cameras' audio is transcoded", errAudioFull, at.max)
	}
	tr := &audioTranscoder{hub: a, at: at, in: make(chan tapped, audioUnitQueue),
		quit: make(chan struct{}), done: make(chan struct{})}
	a.tr, a.users = tr, 1
	go tr.run()
	a.tap.Store(tr)
	return tr, nil
}

// release ends a viewer's use of tr; the last one stops it.
func (a *audioHub) release(tr *audioTranscoder) {
	a.mu.Lock()
	a.users--
	last := a.users == 0 && a.tr == tr
	if last {
		a.tr = nil
		a.tap.Store(nil)
	}
	a.mu.Unlock()
	if last {
		close(tr.quit)
		<-tr.done
		tr.at.running.Add(-1)
	}
}

// join adds v to the viewers sent the camera's Opus.
func (a *audioHub) join(v *viewer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.viewers = append(a.viewers, v)
}

// leave removes v.
func (a *audioHub) leave(v *viewer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := indexOf(a.viewers, v); i >= 0 {
		a.viewers = append(a.viewers[:i], a.viewers[i+1:]...)
	}
}

// send offers p to every viewer.
func (a *audioHub) send(p *audioPacket) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, v := range a.viewers {
		select {
		case v.aq <- p:
		default:
			v.w.atc.dropped.Inc()
		}
	}
}

// audioTranscoder is one camera's Opus for its WebRTC viewers: its
// goroutine (run) transcodes the AAC frames the hub taps to it
// (transcode.ToOpus), packetizes each Opus packet (RFC 7587) and hands it
// to the hub. It exits when the last viewer leaves.
type audioTranscoder struct {
	hub *audioHub
	at  *audioTranscodes
	in  chan tapped

	quit chan struct{}
	done chan struct{}
}

// offer copies u for the transcoder without blocking; past the queue u is
// dropped and counted.
func (tr *audioTranscoder) offer(track *media.Track, u *media.Unit) {
	select {
	case tr.in <- tapped{track: track, unit: u.Clone()}:
	default:
		tr.at.dropped.Inc()
	}
}

// run transcodes on a goroutine of its own, at the recording's priority
// and without locking an OS thread (see rendition.run).
func (tr *audioTranscoder) run() {
	defer close(tr.done)
	var (
		enc     *transcode.ToOpus
		track   *media.Track
		pk      opusPacketizer
		cpu     time.Duration // enc's CPU counted so far
		failing bool
	)
	defer func() {
		if enc != nil {
			enc.Close()
		}
	}()
	log := tr.hub.log
	emit := func(p transcode.OpusPacket) {
		tr.hub.send(pk.packetize(p, tr.hub.clock))
	}
	for {
		select {
		case <-tr.quit:
			return
		case it := <-tr.in:
			if it.track != track {
				// A new run of the camera: a decoder for its AAC.
				if enc != nil {
					enc.Close()
					enc, cpu = nil, 0
				}
				track, failing = it.track, false
				var err error
				if enc, err = transcode.NewToOpus(track); err != nil {
					log.Warn("live audio transcode to Opus unavailable", zap.Error(err))
					failing = true
				}
				pk.newRun()
			}
			if failing {
				continue
			}
			if err := enc.Unit(it.unit, emit); err != nil {
				tr.at.failed.Inc()
				log.Debug("live audio transcode failed", zap.Error(err))
			}
			if c := enc.Stats().CPU; c > cpu {
				tr.at.cpu.Add(int64(c - cpu))
				cpu = c
			}
		}
	}
}

// opusPacketizer turns Opus packets into RTP packets (RFC 7587: one per
// packet, timestamps at 48 kHz from the camera's PTS). Sequence numbers
// and timestamps run on across the camera's runs.
type opusPacketizer struct {
	seq      uint16
	tsOffset uint32
	lastTS   uint32
	init     bool
	started  bool // a packet of the current run was made
}

func (p *opusPacketizer) newRun() {
	if !p.init {
		p.seq, p.lastTS, p.init = uint16(rand.Uint32()), rand.Uint32(), true
	}
	p.started = false
}

// packetize returns the RTP packet of o, with the wall-clock time of its
// timestamp on clock.
func (p *opusPacketizer) packetize(o transcode.OpusPacket, clock *runClock) *audioPacket {
	t48 := uint32(ticks(o.PTS, 48000))
	first := !p.started
	if first {
		// The run's first packet follows the previous run's last by a
		// packet's worth, whatever the new run's PTS.
		p.tsOffset = p.lastTS + 960 - t48
		p.started = true
	}
	ts := t48 + p.tsOffset
	p.lastTS = ts
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, Marker: first, SequenceNumber: p.seq, Timestamp: ts},
		Payload: o.Payload}
	p.seq++
	return &audioPacket{pkt: pkt, ntp: clock.at(o.PTS)}
}

// startAudio sets up the node's audio transcodes unless cfg turns them off
// or the build cannot transcode.
func (w *WebRTC) startAudio() {
	if w.cfg.AudioTranscodeMax < 0 {
		return
	}
	if !transcode.Available() {
		w.log.Info("this build cannot transcode audio (no cgo): WebRTC viewers get no sound")
		return
	}
	w.atc = newAudioTranscodes(w.cfg.AudioTranscodeMax)
	if w.s.cfg.Registerer != nil {
		w.s.cfg.Registerer.MustRegister(w.atc.collectors()...)
	}
}

// audioFor returns the camera's audio transcoder for a new viewer whose
// offer takes Opus, when the camera has audio and the node may transcode
// it; nil for a viewer without sound.
func (w *WebRTC) audioFor(st *stream, offer string) *audioTranscoder {
	if w.atc == nil || !offersAudio(offer, "opus") || !st.audio.hasAudio() {
		return nil
	}
	tr, err := st.audio.acquire(w.atc)
	if err != nil {
		w.log.Debug("webrtc viewer gets no sound", zap.String("camera", st.camera), zap.Error(err))
		return nil
	}
	return tr
}

// useAudio makes v a listener of tr (nil: a viewer without sound).
func (v *viewer) useAudio(tr *audioTranscoder) {
	if tr == nil {
		return
	}
	v.ahub = tr.hub
	v.aq = make(chan *audioPacket, viewerAudioQueue)
	prev := v.release
	v.release = sync.OnceFunc(func() {
		if prev != nil {
			prev()
		}
		tr.hub.release(tr)
	})
}
