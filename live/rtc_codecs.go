package live

import (
	"regexp"
	"strings"

	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/media"
)

// h264Profiles are the H.264 profile-level-ids the node answers. pion
// matches an offered H.264 format on profile and constraints, so each
// profile browsers offer is listed; the camera's stream is sent as it is,
// whatever its own profile: browsers' software decoders decode every
// profile they list (Chromium lists no High profile, yet decodes it).
var h264Profiles = []string{"42001f", "42e01f", "4d001f", "64001f", "f4001f"}

// registerVideoCodecs registers the video codecs the node sends: H.264
// (packetization mode 1) and H.265.
func registerVideoCodecs(me *webrtc.MediaEngine) error {
	pt := webrtc.PayloadType(102)
	for _, p := range h264Profiles {
		if err := me.RegisterCodec(webrtc.RTPCodecParameters{
			RTPCodecCapability: webrtc.RTPCodecCapability{
				MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
				SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=" + p,
			},
			PayloadType: pt,
		}, webrtc.RTPCodecTypeVideo); err != nil {
			return err
		}
		pt++
	}
	return me.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH265, ClockRate: 90000},
		PayloadType:        pt,
	}, webrtc.RTPCodecTypeVideo)
}

// trackCapability is the codec of the track sent for a camera of codec c.
func trackCapability(c media.Codec) webrtc.RTPCodecCapability {
	if c == media.H265 {
		return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH265, ClockRate: 90000}
	}
	return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
		SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"}
}

// rtpmapRe finds the encoding names of an SDP's rtpmap attributes.
var rtpmapRe = regexp.MustCompile(`(?m)^a=rtpmap:\d+ ([A-Za-z0-9-]+)/`)

// offers reports whether the SDP offer lists the codec c (H.264 with
// packetization mode 1 is the only H.264 answered; a browser that offers
// H.264 offers it).
func offers(sdp string, c media.Codec) bool {
	want := "H264"
	if c == media.H265 {
		want = "H265"
	}
	for _, m := range rtpmapRe.FindAllStringSubmatch(sdp, -1) {
		if strings.EqualFold(m[1], want) {
			return true
		}
	}
	return false
}

// offersAudio reports whether the SDP offer has an audio section, not
// rejected (port 0), that lists the encoding name (opus, PCMU, PCMA).
func offersAudio(sdp, name string) bool {
	for _, sec := range strings.Split(sdp, "\nm=")[1:] {
		f := strings.Fields(sec)
		if len(f) < 2 || f[0] != "audio" || f[1] == "0" {
			continue
		}
		for _, m := range rtpmapRe.FindAllStringSubmatch(sec, -1) {
			if strings.EqualFold(m[1], name) {
				return true
			}
		}
	}
	return false
}
