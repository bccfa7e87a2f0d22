package live

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/media"
)

// maxOfferBytes bounds an SDP offer; browsers' are a few KiB.
const maxOfferBytes = 64 << 10

// HTTP patterns of the WHEP endpoint and of its sessions.
const (
	whepPattern    = "/live/{camera}/whep"
	sessionPattern = "/live/{camera}/whep/{session}"
)

// Register adds the WHEP routes to mux:
//
//   - POST /live/{camera}/whep?exp=…&sig=… with an SDP offer
//     (application/sdp) answers 201 with the SDP answer and the session's
//     address in Location;
//   - PATCH /live/{camera}/whep/{session}?exp=…&sig=… with a newer token
//     moves the session's end to that token's expiry (204); a body
//     (trickle ICE) is ignored: the answer holds every candidate;
//   - DELETE /live/{camera}/whep/{session} ends the session (200);
//   - OPTIONS on both answers CORS preflights.
//
// The token is checked on POST and PATCH as on every LL-HLS request: 401
// without one, 403 wrong or expired. A session ends when its token expires
// unless renewed.
func (w *WebRTC) Register(mux interface {
	Handle(pattern string, h http.Handler)
}) {
	mux.Handle("POST "+whepPattern, http.HandlerFunc(w.post))
	mux.Handle("OPTIONS "+whepPattern, http.HandlerFunc(w.preflight))
	mux.Handle("PATCH "+sessionPattern, http.HandlerFunc(w.patch))
	mux.Handle("DELETE "+sessionPattern, http.HandlerFunc(w.delete))
	mux.Handle("OPTIONS "+sessionPattern, http.HandlerFunc(w.preflight))
}

// cors lets a page of an allowed origin (Config.AllowOrigin) read the
// answer and its Location.
func (w *WebRTC) cors(rw http.ResponseWriter, r *http.Request) bool {
	if !allowOrigin(rw.Header(), r, w.s.cfg.AllowOrigin) {
		return false
	}
	rw.Header().Set("Access-Control-Expose-Headers", "Location, Retry-After")
	return true
}

func (w *WebRTC) preflight(rw http.ResponseWriter, r *http.Request) {
	if !w.cors(rw, r) {
		rw.WriteHeader(http.StatusNoContent)
		return
	}
	h := rw.Header()
	h.Set("Access-Control-Allow-Methods", "POST, PATCH, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, If-Match")
	h.Set("Access-Control-Max-Age", "600")
	rw.WriteHeader(http.StatusNoContent)
}

// refuse answers status with msg and counts it under result.
func (w *WebRTC) refuse(rw http.ResponseWriter, status int, result, msg string) {
	w.requests.WithLabelValues(result).Inc()
	http.Error(rw, msg, status)
}

// post is the WHEP endpoint: a new viewer.
func (w *WebRTC) post(rw http.ResponseWriter, r *http.Request) {
	w.cors(rw, r)
	camera := r.PathValue("camera")
	if terr := check(w.s.cfg.Keys, camera, r.URL.Query(), time.Now()); terr != nil {
		w.refuse(rw, terr.status, "refused", terr.msg)
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/sdp" {
		w.refuse(rw, http.StatusUnsupportedMediaType, "bad_offer", "the offer must be application/sdp")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxOfferBytes))
	if err != nil {
		w.refuse(rw, http.StatusRequestEntityTooLarge, "bad_offer", "offer too large or unreadable")
		return
	}
	if result, msg := checkOfferShape(w.cfg, string(body)); result != "" {
		w.refuse(rw, http.StatusBadRequest, result, msg)
		return
	}
	st := w.s.stream(camera)
	if st == nil {
		w.refuse(rw, http.StatusNotFound, "not_here", "camera not recorded by this node")
		return
	}
	codec := st.hub.videoCodec()
	if codec == "" {
		// The camera has no video yet (it is connecting): a viewer may
		// ask again shortly, which the player does before falling back.
		rw.Header().Set("Retry-After", "1")
		w.refuse(rw, http.StatusServiceUnavailable, "not_started", "stream not started yet")
		return
	}
	var rend *rendition
	if !offers(string(body), codec) {
		// An H.265 camera and a browser without H.265: its H.264
		// rendition, when the node may transcode (transcode_hub.go).
		status, result, msg := 0, "", ""
		if rend, status, result, msg = w.transcodeFor(st, codec, string(body)); rend == nil {
			w.refuse(rw, status, result, msg)
			return
		}
		codec = media.H264
	}
	exp, _ := strconv.ParseInt(r.URL.Query().Get("exp"), 10, 64)
	v := newViewer(w, st, codec, time.Unix(exp, 0))
	v.keys = w.keysOf(r, camera)
	v.useRendition(rend)
	if c := w.g711For(st, string(body)); c != "" {
		v.useG711(st, c)
	} else {
		v.useAudio(w.audioFor(st, string(body)))
	}
	if err := w.add(v); err != nil {
		v.releaseRendition()
		if le, ok := errors.AsType[*limitError](err); ok {
			// 429: the viewer's own sessions hold the places; the
			// player falls back to LL-HLS as on 503.
			w.refuse(rw, http.StatusTooManyRequests, le.result, le.msg)
			return
		}
		w.refuse(rw, http.StatusServiceUnavailable, "full", err.Error())
		return
	}
	answer, err := w.connect(r, v, string(body))
	if err != nil {
		v.releaseRendition()
		w.remove(v)
		if v.pc != nil {
			_ = v.pc.Close()
		}
		close(v.done) // run never started: Close need not wait for it
		w.refuse(rw, http.StatusBadRequest, "bad_offer", "offer not answered: "+err.Error())
		return
	}
	go v.run()
	w.requests.WithLabelValues("answered").Inc()
	rw.Header().Set("Content-Type", "application/sdp")
	rw.Header().Set("Location", "/live/"+url.PathEscape(camera)+"/whep/"+v.id)
	rw.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(rw, answer)
}

// connect builds v's peer connection for offer and returns the answer,
// with the node's candidates gathered within GatherTimeout.
func (w *WebRTC) connect(r *http.Request, v *viewer, offer string) (string, error) {
	pc, err := w.api(&v.secrets).NewPeerConnection(webrtc.Configuration{ICEServers: w.iceServers()})
	if err != nil {
		return "", err
	}
	v.pc = pc
	if v.track, err = newRTCTrack(v.codec); err != nil {
		return "", err
	}
	sender, err := pc.AddTrack(v.track)
	if err != nil {
		return "", err
	}
	var audio *webrtc.RTPSender
	if v.ahub != nil || v.pass != nil {
		// Pion pairs it with the offer's audio section, which the
		// viewer's Opus or G.711 in it made (offersAudio).
		c := opusCapability
		if v.pass != nil {
			c = g711Capability(v.passCodec)
		}
		if v.audio, err = newTrack(c, "audio"); err != nil {
			return "", err
		}
		if audio, err = pc.AddTrack(v.audio); err != nil {
			return "", err
		}
	}
	sender.Transport().ICETransport().OnSelectedCandidatePairChange(func(*webrtc.ICECandidatePair) { v.repath.Store(true) })
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		switch s {
		case webrtc.PeerConnectionStateConnected:
			v.setConnected()
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
			v.stop()
		}
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", err
	}
	if v.audio == nil {
		// An audio section the viewer offers to receive is answered
		// inactive: pion would answer it sendonly, with no track, and a
		// browser would make a track of it that never sounds.
		for _, t := range pc.GetTransceivers() {
			if t.Kind() == webrtc.RTPCodecTypeAudio && t.Sender() == nil {
				if err := t.Stop(); err != nil {
					return "", err
				}
			}
		}
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return "", err
	}
	t := time.NewTimer(w.cfg.GatherTimeout)
	defer t.Stop()
	select {
	case <-gathered:
	case <-t.C:
		w.log.Debug("webrtc candidates not all gathered in time")
	case <-r.Context().Done():
		return "", r.Context().Err()
	}
	go readRTCP(sender)
	if audio != nil {
		go readRTCP(audio)
	}
	return pc.LocalDescription().SDP, nil
}

// patch renews a session with a newer token.
func (w *WebRTC) patch(rw http.ResponseWriter, r *http.Request) {
	w.cors(rw, r)
	camera := r.PathValue("camera")
	if terr := check(w.s.cfg.Keys, camera, r.URL.Query(), time.Now()); terr != nil {
		w.refuse(rw, terr.status, "refused", terr.msg)
		return
	}
	v := w.session(r.PathValue("session"))
	if v == nil || v.camera != camera {
		http.Error(rw, "no such session", http.StatusNotFound)
		return
	}
	_, _ = io.Copy(io.Discard, http.MaxBytesReader(rw, r.Body, maxOfferBytes))
	exp, _ := strconv.ParseInt(r.URL.Query().Get("exp"), 10, 64)
	v.renew(time.Unix(exp, 0))
	rw.WriteHeader(http.StatusNoContent)
}

// delete ends a session; its id is the capability.
func (w *WebRTC) delete(rw http.ResponseWriter, r *http.Request) {
	w.cors(rw, r)
	v := w.session(r.PathValue("session"))
	if v == nil || v.camera != r.PathValue("camera") {
		http.Error(rw, "no such session", http.StatusNotFound)
		return
	}
	v.close()
	rw.WriteHeader(http.StatusOK)
}
