package rtsp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/auth"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/headers"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"github.com/bluenviron/gortsplib/v4/pkg/sdp"
	psdp "github.com/pion/sdp/v3"
)

// A tcpSession is one RTSP session whose RTP comes interleaved on the RTSP
// connection (RFC 2326 10.12), played by the lean client of this package:
// gortsplib's protocol types (requests, headers, authentication, SDP) with
// a read loop of its own that parses interleaved frames in place in one
// read buffer, without a copy or an allocation per packet.
//
// The handshake (OPTIONS, DESCRIBE with redirects, SETUP, PLAY) runs on the
// caller's goroutine, as does the read loop; writes (requests, keepalives,
// receiver reports, answers to the server) are serialized by wmu.
type tcpSession struct {
	timeout     time.Duration
	userAgent   string
	dial        dialFunc
	reportEvery time.Duration // RTCP receiver reports; 0 means receiverReportPeriod

	mu      sync.Mutex // guards nc's replacement and closing, stopped, playing
	nc      net.Conn
	stopped bool // the caller's context ended: no new connection
	playing bool // PLAY succeeded: a stop sends TEARDOWN

	br *bufio.Reader
	tc *timedConn // what br reads: when its last read returned data

	wmu  sync.Mutex
	cseq int

	session         string
	sender          *auth.Sender
	useGetParameter bool
	keepalive       time.Duration
	baseURL         *base.URL
}

// sessionReadBuffer is the size of the session's read buffer: a camera sends
// a frame as a burst of RTP packets, and one read takes as much of the
// burst as is there. Interleaved frames that do not fit are read into a
// buffer of their own (rare: RTP over TCP keeps packets under the MTU).
const sessionReadBuffer = 16 << 10

// maxRedirects bounds the DESCRIBE redirects followed in one attempt.
const maxRedirects = 5

// defaultKeepalive is the period of keepalive requests when the server
// names no session timeout (RFC 2326 says 60 s).
const defaultKeepalive = 30 * time.Second

// errNotTCP is returned when the camera refuses RTP over the RTSP
// connection.
var errNotTCP = errors.New("the camera does not offer RTP over TCP (set transport udp or auto)")

// connect dials u's host and wraps the connection for TLS when u is rtsps.
func (s *tcpSession) connect(ctx context.Context, u *base.URL) error {
	dctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	nc, err := s.dial(dctx, "tcp", canonicalAddr(u))
	if err != nil {
		return err
	}
	if u.Scheme == "rtsps" {
		nc = tls.Client(nc, &tls.Config{ServerName: u.Hostname()})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		_ = nc.Close()
		return context.Canceled
	}
	s.nc = nc
	s.tc = &timedConn{Conn: nc}
	s.br = bufio.NewReaderSize(s.tc, sessionReadBuffer)
	s.session, s.sender, s.cseq = "", nil, 0
	return nil
}

// close closes the connection.
func (s *tcpSession) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nc != nil {
		_ = s.nc.Close()
	}
}

// stop ends the session for good: TEARDOWN when playing, then the
// connection closed; no connection is made after it.
func (s *tcpSession) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.nc == nil {
		return
	}
	if s.playing {
		s.teardown()
	}
	_ = s.nc.Close()
}

// write sends a request with the session's headers.
func (s *tcpSession) write(req *base.Request) (string, error) {
	return s.writeWithin(req, s.timeout)
}

// writeWithin sends a request, giving up after d.
func (s *tcpSession) writeWithin(req *base.Request, d time.Duration) (string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if req.Header == nil {
		req.Header = base.Header{}
	}
	s.cseq++
	cseq := strconv.Itoa(s.cseq)
	req.Header["CSeq"] = base.HeaderValue{cseq}
	req.Header["User-Agent"] = base.HeaderValue{s.userAgent}
	if s.session != "" {
		req.Header["Session"] = base.HeaderValue{s.session}
	}
	if s.sender != nil {
		s.sender.AddAuthorization(req)
	}
	b, err := req.Marshal()
	if err != nil {
		return "", err
	}
	_ = s.nc.SetWriteDeadline(time.Now().Add(d))
	_, err = s.nc.Write(b)
	return cseq, err
}

// writeRaw sends bytes already framed (answers, receiver reports).
func (s *tcpSession) writeRaw(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.nc.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := s.nc.Write(b)
	return err
}

// do sends req and waits for its response, answering one 401 with the
// credentials of req's URL.
func (s *tcpSession) do(req *base.Request) (*base.Response, error) {
	for attempt := 0; ; attempt++ {
		cseq, err := s.write(req)
		if err != nil {
			return nil, err
		}
		res, err := s.response(cseq)
		if err != nil {
			return nil, err
		}
		if v, ok := res.Header["Session"]; ok {
			var sx headers.Session
			if err := sx.Unmarshal(v); err != nil {
				return nil, liberrors.ErrClientSessionHeaderInvalid{Err: err}
			}
			s.session = sx.Session
			if sx.Timeout != nil && *sx.Timeout > 0 {
				s.keepalive = time.Duration(*sx.Timeout) * time.Second * 8 / 10
			}
		}
		if res.StatusCode == base.StatusUnauthorized && req.URL.User != nil && attempt == 0 {
			pass, _ := req.URL.User.Password()
			se := &auth.Sender{WWWAuth: res.Header["WWW-Authenticate"], User: req.URL.User.Username(), Pass: pass}
			if err := se.Initialize(); err != nil {
				return nil, liberrors.ErrClientAuthSetup{Err: err}
			}
			s.sender = se
			continue
		}
		return res, nil
	}
}

// response reads until the response of cseq, skipping interleaved frames
// and answering the server's own requests.
func (s *tcpSession) response(cseq string) (*base.Response, error) {
	_ = s.nc.SetReadDeadline(time.Now().Add(s.timeout))
	defer func() { _ = s.nc.SetReadDeadline(time.Time{}) }()
	for {
		kind, err := s.next()
		if err != nil {
			return nil, err
		}
		switch kind {
		case '$':
			if err := s.skipFrame(); err != nil {
				return nil, err
			}
		case 'R':
			var res base.Response
			if err := res.Unmarshal(s.br); err != nil {
				return nil, fmt.Errorf("rtsp response: %w", err)
			}
			if v := res.Header["CSeq"]; len(v) == 1 && v[0] != cseq {
				continue // the answer to an earlier request (a keepalive)
			}
			return &res, nil
		case 'Q':
			if err := s.serverRequest(); err != nil {
				return nil, err
			}
		}
	}
}

// next skips bytes that start nothing known and reports what comes: '$'
// for an interleaved frame, 'R' for a response, 'Q' for a request.
func (s *tcpSession) next() (byte, error) {
	for {
		b, err := s.br.Peek(2)
		if err != nil {
			return 0, err
		}
		switch {
		case b[0] == base.InterleavedFrameMagicByte:
			return '$', nil
		case b[0] == 'R' && b[1] == 'T':
			return 'R', nil
		case requestStart(b):
			return 'Q', nil
		}
		if _, err := s.br.Discard(1); err != nil {
			return 0, err
		}
	}
}

// requestStart reports whether b starts an RTSP method name.
func requestStart(b []byte) bool {
	switch string(b) {
	case "AN", "DE", "GE", "OP", "PA", "PL", "RE", "SE", "TE":
		return true
	}
	return false
}

// skipFrame discards one interleaved frame.
func (s *tcpSession) skipFrame() error {
	h, err := s.br.Peek(4)
	if err != nil {
		return err
	}
	_, err = s.br.Discard(4 + frameSize(h))
	return err
}

// serverRequest reads a request of the server and answers it: 200 to
// keepalives (OPTIONS, GET_PARAMETER), 501 to anything else.
func (s *tcpSession) serverRequest() error {
	b, err := s.readRequest()
	if err != nil {
		return err
	}
	return s.writeRaw(b)
}

// readRequest reads a request of the server and returns the answer.
func (s *tcpSession) readRequest() ([]byte, error) {
	var req base.Request
	if err := req.Unmarshal(s.br); err != nil {
		return nil, fmt.Errorf("rtsp request from the camera: %w", err)
	}
	res := base.Response{StatusCode: base.StatusNotImplemented, Header: base.Header{"User-Agent": {s.userAgent}}}
	if req.Method == base.Options || req.Method == base.GetParameter {
		res.StatusCode = base.StatusOK
	}
	if v, ok := req.Header["CSeq"]; ok {
		res.Header["CSeq"] = v
	}
	return res.Marshal()
}

// handshake connects and sends OPTIONS and DESCRIBE, following redirects.
// It returns the session description.
func (s *tcpSession) handshake(ctx context.Context, u *base.URL) (*description.Session, error) {
	for redirects := 0; ; redirects++ {
		if err := s.connect(ctx, u); err != nil {
			return nil, err
		}
		res, err := s.do(&base.Request{Method: base.Options, URL: u})
		if err != nil {
			return nil, err
		}
		switch {
		case res.StatusCode == base.StatusOK:
			s.useGetParameter = supportsGetParameter(res.Header)
		case res.StatusCode != base.StatusNotFound: // OPTIONS is optional
			return nil, liberrors.ErrClientBadStatusCode{Code: res.StatusCode, Message: res.StatusMessage}
		}
		res, err = s.do(&base.Request{Method: base.Describe, URL: u, Header: base.Header{"Accept": {"application/sdp"}}})
		if err != nil {
			return nil, err
		}
		if res.StatusCode >= base.StatusMovedPermanently && res.StatusCode <= base.StatusUseProxy && len(res.Header["Location"]) == 1 {
			if redirects == maxRedirects {
				return nil, ErrTooManyRedirects
			}
			ru, err := base.ParseURL(res.Header["Location"][0])
			if err != nil {
				return nil, fmt.Errorf("redirect location: %w", err)
			}
			if u.Scheme == "rtsps" && ru.Scheme != "rtsps" {
				return nil, errors.New("redirect refused: it would downgrade rtsps to rtsp")
			}
			if ru.Scheme != "rtsp" && ru.Scheme != "rtsps" {
				return nil, fmt.Errorf("redirect to an unsupported scheme %q", ru.Scheme)
			}
			// The dial guard refuses another host when the URL carries
			// credentials (redirect.go).
			ru.User = u.User
			s.close()
			u = ru
			continue
		}
		if res.StatusCode != base.StatusOK {
			return nil, liberrors.ErrClientBadStatusCode{Code: res.StatusCode, Message: res.StatusMessage}
		}
		return s.description(res, u)
	}
}

// description parses the SDP of a DESCRIBE response.
func (s *tcpSession) description(res *base.Response, u *base.URL) (*description.Session, error) {
	ct, ok := res.Header["Content-Type"]
	if !ok || len(ct) != 1 {
		return nil, liberrors.ErrClientContentTypeMissing{}
	}
	if t := strings.TrimSpace(strings.Split(ct[0], ";")[0]); t != "application/sdp" {
		return nil, liberrors.ErrClientContentTypeUnsupported{CT: ct}
	}
	var ssd sdp.SessionDescription
	if err := ssd.Unmarshal(res.Body); err != nil {
		return nil, liberrors.ErrClientSDPInvalid{Err: err}
	}
	desc, err := lenientDescription(&ssd)
	if err != nil {
		return nil, liberrors.ErrClientSDPInvalid{Err: err}
	}
	base, err := findBaseURL(&ssd, res, u)
	if err != nil {
		return nil, err
	}
	desc.BaseURL = base
	return desc, nil
}

// lenientDescription reads the medias of ssd, leaving out those that do
// not parse (an AAC track without its config, an unknown format's bad
// attributes) when others do: one bad track of a camera must not keep its
// video from being recorded. With none that parses, the first error.
func lenientDescription(ssd *sdp.SessionDescription) (*description.Session, error) {
	var desc description.Session
	err := desc.Unmarshal(ssd)
	if err == nil {
		return &desc, nil
	}
	kept := *ssd
	kept.MediaDescriptions = nil
	for _, m := range ssd.MediaDescriptions {
		one := *ssd
		one.MediaDescriptions = []*psdp.MediaDescription{m}
		var d description.Session
		if d.Unmarshal(&one) == nil {
			kept.MediaDescriptions = append(kept.MediaDescriptions, m)
		}
	}
	if len(kept.MediaDescriptions) == 0 {
		return nil, err
	}
	desc = description.Session{}
	if err := desc.Unmarshal(&kept); err != nil {
		return nil, err
	}
	return &desc, nil
}

// setup asks for each media over the connection and returns the RTP
// channel the server chose for each.
func (s *tcpSession) setup(baseURL *base.URL, medias []*description.Media) ([]int, error) {
	channels := make([]int, len(medias))
	for i, m := range medias {
		mu, err := m.URL(baseURL)
		if err != nil {
			return nil, err
		}
		delivery := headers.TransportDeliveryUnicast
		th := headers.Transport{Protocol: headers.TransportProtocolTCP, Delivery: &delivery, InterleavedIDs: &[2]int{2 * i, 2*i + 1}}
		res, err := s.do(&base.Request{Method: base.Setup, URL: mu, Header: base.Header{"Transport": th.Marshal()}})
		if err != nil {
			return nil, err
		}
		switch {
		case res.StatusCode == base.StatusUnsupportedTransport:
			return nil, errNotTCP
		case res.StatusCode != base.StatusOK:
			return nil, liberrors.ErrClientBadStatusCode{Code: res.StatusCode, Message: res.StatusMessage}
		}
		var tr headers.Transport
		if err := tr.Unmarshal(res.Header["Transport"]); err != nil {
			return nil, liberrors.ErrClientTransportHeaderInvalid{Err: err}
		}
		if tr.Protocol != headers.TransportProtocolTCP {
			return nil, errNotTCP
		}
		channels[i] = 2 * i
		if tr.InterleavedIDs != nil {
			channels[i] = tr.InterleavedIDs[0]
		}
		for j := range i {
			if channels[j] == channels[i] {
				return nil, liberrors.ErrClientTransportHeaderInterleavedIDsInUse{}
			}
		}
	}
	s.baseURL = baseURL
	return channels, nil
}

// play starts the media.
func (s *tcpSession) play() error {
	ra := headers.Range{Value: &headers.RangeNPT{Start: 0}}
	res, err := s.do(&base.Request{Method: base.Play, URL: s.baseURL, Header: base.Header{"Range": ra.Marshal()}})
	if err != nil {
		return err
	}
	if res.StatusCode != base.StatusOK {
		return liberrors.ErrClientBadStatusCode{Code: res.StatusCode, Message: res.StatusMessage}
	}
	s.mu.Lock()
	s.playing = true
	s.mu.Unlock()
	return nil
}

// sendKeepalive sends GET_PARAMETER (or OPTIONS when the camera does not
// list GET_PARAMETER) without waiting: the read loop skips the answer.
func (s *tcpSession) sendKeepalive() error {
	m := base.Options
	if s.useGetParameter {
		m = base.GetParameter
	}
	_, err := s.write(&base.Request{Method: m, URL: s.baseURL})
	return err
}

// teardown ends the session, best effort, within a short deadline.
func (s *tcpSession) teardown() {
	if s.baseURL == nil {
		return
	}
	_, _ = s.writeWithin(&base.Request{Method: base.Teardown, URL: s.baseURL}, teardownTimeout)
}

// teardownTimeout bounds the TEARDOWN sent when a camera stops.
const teardownTimeout = 200 * time.Millisecond

// supportsGetParameter reports whether an OPTIONS answer lists
// GET_PARAMETER (some servers need it as the keepalive).
func supportsGetParameter(h base.Header) bool {
	pub, ok := h["Public"]
	if !ok || len(pub) != 1 {
		return false
	}
	for _, m := range strings.Split(pub[0], ",") {
		if base.Method(strings.TrimSpace(m)) == base.GetParameter {
			return true
		}
	}
	return false
}

// findBaseURL is the URL that media controls are relative to: the SDP's
// session control, Content-Base, or the request URL, in that order, with
// the request's credentials.
//
// It follows findBaseURL of gortsplib's client (client.go of
// github.com/bluenviron/gortsplib/v4), under this notice:
//
//	MIT License
//
//	Copyright (c) 2020 aler9
//
//	Permission is hereby granted, free of charge, to any person obtaining a copy
//	of this software and associated documentation files (the "Software"), to deal
//	in the Software without restriction, including without limitation the rights
//	to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
//	copies of the Software, and to permit persons to whom the Software is
//	furnished to do so, subject to the following conditions:
//
//	The above copyright notice and this permission notice shall be included in all
//	copies or substantial portions of the Software.
//
//	THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
//	IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
//	FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
//	AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
//	LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
//	OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
//	SOFTWARE.
func findBaseURL(sd *sdp.SessionDescription, res *base.Response, u *base.URL) (*base.URL, error) {
	if control, ok := sd.Attribute("control"); ok && control != "*" {
		ret, err := base.ParseURL(control)
		if err != nil {
			return nil, fmt.Errorf("invalid control attribute %q", control)
		}
		ret.User = u.User
		return ret, nil
	}
	if cb, ok := res.Header["Content-Base"]; ok {
		if len(cb) != 1 {
			return nil, fmt.Errorf("invalid Content-Base %q", cb)
		}
		s := cb[0]
		if strings.HasPrefix(s, "/") {
			s = u.Scheme + "://" + u.Host + s
		}
		ret, err := base.ParseURL(s)
		if err != nil {
			return nil, fmt.Errorf("invalid Content-Base %q", cb)
		}
		ret.User = u.User
		return ret, nil
	}
	return u, nil
}
