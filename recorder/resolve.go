package recorder

import (
	"fmt"
	"strconv"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/p2p"
)

// resolve turns a camera's record into what the node records: its sealed
// source URL opened with Config.Keys, push and P2P cameras given the URLs
// of their drivers. An error wrapping ingest.PermanentError sets ERRO
// PERMANENTE until the record changes.
func (r *Recorder) resolve(c camera.Config) (ingest.Camera, error) {
	spec := ingest.Camera{ID: c.ID, Transport: c.Transport, Sound: c.Sound, Trusted: c.Trusted, PlanWidth: c.Width, PlanHeight: c.Height}
	if u, ok, err := r.pushOrP2PURL(c); ok {
		if err != nil {
			return spec, ingest.Permanent(ingest.ReasonBadURL, err)
		}
		spec.URL, spec.Transport = u, ""
		return spec, nil
	}
	switch c.ConnectionType {
	case camera.RTSP, camera.RTMP:
		url, err := camera.Open(r.cfg.Keys, c.SealedURL)
		if err != nil {
			return spec, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("camera %s: source url: %w", c.ID, err))
		}
		if url == "" {
			return spec, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("camera %s has no source url", c.ID))
		}
		if r.cfg.Discover != nil {
			if url, err = r.cfg.Discover(c, url); err != nil {
				return spec, err
			}
		}
		spec.URL = url
		return spec, nil
	}
	return spec, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("camera %s: connection type %d is not recordable yet", c.ID, c.ConnectionType))
}

// pushOrP2PURL returns the source URL of an RTMP push camera (an RTMP
// camera without a URL: "rtmp-push:") or a P2P camera (p2p://…); ok is
// false for cameras with a URL of their own.
func (r *Recorder) pushOrP2PURL(c camera.Config) (u string, ok bool, err error) {
	switch {
	case c.ConnectionType == camera.RTMP && c.SealedURL == "" && c.PushKeyGen > 0:
		// The generation in the URL restarts the camera when its key is
		// rotated, ending the session opened with the old key.
		return "rtmp-push:?key_gen=" + strconv.Itoa(c.PushKeyGen), true, nil
	case c.ConnectionType == camera.RTMP && c.SealedURL == "":
		return "rtmp-push:", true, nil
	case c.ConnectionType == camera.P2P:
		pass, err := camera.Open(r.cfg.Keys, c.P2PSealedPassword)
		if err != nil {
			return "", true, fmt.Errorf("camera %s: p2p password: %w", c.ID, err)
		}
		return p2p.URL(c.P2PSerial, pass, c.Stream), true, nil
	}
	return "", false, nil
}
