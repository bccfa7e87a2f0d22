package synth

import (
	"bufio"
	"encoding/hex"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/headers"
)

// fleetPublic is the OPTIONS answer of a fleet camera.
const fleetPublic = "OPTIONS, DESCRIBE, SETUP, PLAY, GET_PARAMETER, SET_PARAMETER, TEARDOWN"

// fleetWriteTimeout bounds the write of an answer before PLAY.
const fleetWriteTimeout = 5 * time.Second

// fleetSession is one RTSP connection to the fleet, carrying at most one
// session of one camera. Its connection goroutine (serve) reads requests
// and the reader's RTCP and answers them; once the session plays, the
// scheduler writes its media. Both write through send, under mu.
type fleetSession struct {
	f  *Fleet
	nc net.Conn
	br *bufio.Reader
	w  fleetWriter

	// Set by the connection goroutine before PLAY, read by the scheduler
	// after it (the hand-over through Fleet.play orders them).
	id           string
	cam          *fleetCamera
	video, audio trackSession
	played       bool // PLAY was answered (connection goroutine only)

	closed atomic.Bool

	mu      sync.Mutex // guards the fields below and every write to nc
	playing bool
	pending []byte // bytes a slow reader has not taken yet, sent first
	sent    int    // bytes of pending already written

	// The scheduler's, once playing (fleet_sched.go). Times are since
	// the fleet's epoch.
	due     time.Duration // when the next video frame is due
	k       int64         // the next video frame on the camera's timeline
	k0      int64         // the first frame of the session (timestamps count from it)
	abase   time.Duration // due time of audio frame ak = abase + ak × 1024 / rate
	ak      int64
	an      int64 // audio frames since the session started (timestamps)
	apos    int
	lastSR  time.Duration
	srSent  bool
	heapIdx int
}

// trackSession is one track of a session: its interleaved channel, RTP
// identity and sender report counts.
type trackSession struct {
	set     bool
	channel byte // RTP; RTCP is channel+1
	ssrc    uint32
	seq     uint16
	ts0     uint32
	packets uint32
	octets  uint32
	lastTS  uint32        // timestamp of the last frame sent
	lastAt  time.Duration // when that frame was due, since the fleet's epoch
}

func newFleetSession(f *Fleet, nc net.Conn) *fleetSession {
	return &fleetSession{f: f, nc: nc, br: bufio.NewReaderSize(nc, 4096), w: newFleetWriter(nc)}
}

// close ends the connection once; the scheduler drops the session at its
// next turn.
func (s *fleetSession) close() {
	if s.closed.Swap(true) {
		return
	}
	s.mu.Lock() // no write in progress: the writer's descriptor closes with nc
	_ = s.nc.Close()
	wasPlaying := s.playing
	s.pending = nil
	s.mu.Unlock()
	if wasPlaying {
		s.f.stats.sessions.Add(-1)
	}
}

// serve reads the connection until it ends: requests are answered,
// interleaved frames from the reader (receiver reports) are skipped.
// Nothing received for SessionTimeout ends it, as does a request that does
// not parse.
func (s *fleetSession) serve() {
	defer s.close()
	for {
		_ = s.nc.SetReadDeadline(time.Now().Add(s.f.cfg.SessionTimeout))
		b, err := s.br.Peek(1)
		if err != nil {
			return
		}
		if b[0] == '$' {
			h, err := s.br.Peek(interleavedHeaderSize)
			if err != nil {
				return
			}
			if _, err := s.br.Discard(interleavedHeaderSize + (int(h[2])<<8 | int(h[3]))); err != nil {
				return
			}
			continue
		}
		var req base.Request
		if err := req.Unmarshal(s.br); err != nil {
			s.f.stats.badRequests.Add(1)
			return
		}
		s.f.stats.requests.Add(1)
		res, next := s.handle(&req)
		if v, ok := req.Header["CSeq"]; ok {
			res.Header["CSeq"] = v
		}
		if err := s.reply(res); err != nil {
			return
		}
		switch next {
		case nextPlay:
			s.f.play(s)
		case nextEnd:
			return
		}
	}
}

// What a request leads to once answered.
const (
	nextNone = iota
	nextPlay // start the media
	nextEnd  // close the connection
)

// handle answers one request.
func (s *fleetSession) handle(req *base.Request) (*base.Response, int) {
	res := &base.Response{StatusCode: base.StatusOK, Header: base.Header{}}
	status := func(c base.StatusCode) (*base.Response, int) {
		res.StatusCode = c
		return res, nextNone
	}
	if s.id != "" {
		res.Header["Session"] = base.HeaderValue{s.id + ";timeout=" + strconv.Itoa(int(s.f.cfg.SessionTimeout/time.Second))}
	}
	switch req.Method {
	case base.Options:
		res.Header["Public"] = base.HeaderValue{fleetPublic}
		return res, nextNone
	case base.GetParameter, base.SetParameter:
		return res, nextNone
	case base.Teardown:
		return res, nextEnd
	case base.Describe:
		cam, tail := s.lookup(req)
		if cam == nil || (tail != "" && tail != "/") {
			return status(base.StatusNotFound)
		}
		u := req.URL.CloneWithoutCredentials()
		u.Path = "/" + cam.path + "/"
		u.RawQuery = ""
		res.Header["Content-Type"] = base.HeaderValue{"application/sdp"}
		res.Header["Content-Base"] = base.HeaderValue{u.String()}
		res.Body = cam.clips.sdp
		return res, nextNone
	case base.Setup:
		return s.setup(req, res)
	case base.Play:
		switch {
		case s.id == "":
			return status(base.StatusSessionNotFound)
		case s.played:
			return res, nextNone
		}
		s.played = true
		res.Header["Range"] = base.HeaderValue{"npt=0.000-"}
		return res, nextPlay
	}
	return status(base.StatusNotImplemented)
}

// lookup returns the camera a request's URL names and what follows its
// path.
func (s *fleetSession) lookup(req *base.Request) (*fleetCamera, string) {
	if req.URL == nil {
		return nil, ""
	}
	return s.f.camera(req.URL.Path)
}

// setup answers SETUP of one track of the connection's camera: RTP
// interleaved on the connection only.
func (s *fleetSession) setup(req *base.Request, res *base.Response) (*base.Response, int) {
	status := func(c base.StatusCode) (*base.Response, int) {
		res.StatusCode = c
		return res, nextNone
	}
	cam, tail := s.lookup(req)
	if cam == nil {
		return status(base.StatusNotFound)
	}
	var ts *trackSession
	switch tail {
	case "/trackID=0":
		ts = &s.video
	case "/trackID=1":
		if cam.clips.audio == nil {
			return status(base.StatusNotFound)
		}
		ts = &s.audio
	default:
		return status(base.StatusNotFound)
	}
	switch {
	case s.cam != nil && s.cam != cam:
		return status(base.StatusBadRequest) // one camera per connection
	case s.played:
		return status(base.StatusMethodNotValidInThisState)
	}
	var th headers.Transport
	if err := th.Unmarshal(req.Header["Transport"]); err != nil {
		return status(base.StatusBadRequest)
	}
	if th.Protocol != headers.TransportProtocolTCP {
		return status(base.StatusUnsupportedTransport)
	}
	channel := 0
	if ts == &s.audio {
		channel = 2
	}
	if th.InterleavedIDs != nil {
		channel = th.InterleavedIDs[0]
	}
	if channel < 0 || channel > 254 || channel%2 != 0 {
		return status(base.StatusUnsupportedTransport)
	}
	other := &s.audio
	if ts == &s.audio {
		other = &s.video
	}
	if other.set && (int(other.channel) == channel || int(other.channel) == channel+1 || int(other.channel)+1 == channel) {
		return status(base.StatusUnsupportedTransport)
	}
	s.cam = cam
	*ts = trackSession{set: true, channel: byte(channel), ssrc: rand.Uint32(), seq: uint16(rand.Uint32()), ts0: rand.Uint32()}
	if s.id == "" {
		var id [8]byte
		for i := range id {
			id[i] = byte(rand.Uint32())
		}
		s.id = hex.EncodeToString(id[:])
		res.Header["Session"] = base.HeaderValue{s.id + ";timeout=" + strconv.Itoa(int(s.f.cfg.SessionTimeout/time.Second))}
	}
	delivery := headers.TransportDeliveryUnicast
	ssrc := ts.ssrc
	out := headers.Transport{
		Protocol:       headers.TransportProtocolTCP,
		Delivery:       &delivery,
		InterleavedIDs: &[2]int{channel, channel + 1},
		SSRC:           &ssrc,
	}
	res.Header["Transport"] = out.Marshal()
	return res, nextNone
}

// reply writes an answer: straight to the connection before PLAY, through
// the session's queue once media flows.
func (s *fleetSession) reply(res *base.Response) error {
	b, err := res.Marshal()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.playing {
		var iov fleetIovecs
		_, _, err := s.sendLocked(&iov, [][]byte{b}, false)
		return err
	}
	_ = s.nc.SetWriteDeadline(time.Now().Add(fleetWriteTimeout))
	_, err = s.nc.Write(b)
	_ = s.nc.SetWriteDeadline(time.Time{})
	return err
}

// fleetSDP is the session description of a camera: video as track 0 and,
// with audio, AAC as track 1.
func fleetSDP(c *fleetClips) ([]byte, error) {
	var vf format.Format
	if c.codec == CodecH265 {
		vf = &format.H265{PayloadTyp: videoPayloadType, VPS: c.clip.VPS, SPS: c.clip.SPS, PPS: c.clip.PPS}
	} else {
		vf = &format.H264{PayloadTyp: videoPayloadType, PacketizationMode: 1, SPS: c.clip.SPS, PPS: c.clip.PPS}
	}
	desc := description.Session{Medias: []*description.Media{
		{Type: description.MediaTypeVideo, Control: "trackID=0", Formats: []format.Format{vf}},
	}}
	if c.audio != nil {
		desc.Medias = append(desc.Medias, &description.Media{
			Type: description.MediaTypeAudio, Control: "trackID=1", Formats: []format.Format{newAudioFormat(c.aac)},
		})
	}
	return desc.Marshal(false)
}
