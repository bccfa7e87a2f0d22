package api

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/camera"
)

// resolveTimeout bounds the DNS lookup of a camera host.
const resolveTimeout = 3 * time.Second

// cameraInput is a checked camera payload (spec 2.3).
type cameraInput struct {
	row         db.Camera
	sourceURL   string // RTSP URL or RTMP pull URL; "" for RTMP push and P2P
	p2pPassword string
	resolution  Resolution
}

// parseCamera reads and checks a camera payload: the common required
// fields, then the rules of its connection_type (docs/api.md), then the
// source URL's address.
func (s *Server) parseCamera(ctx context.Context, in map[string]any, errs fieldErrors) cameraInput {
	f := newFields(in, errs)
	var ci cameraInput
	c := &ci.row
	c.Description = f.str("description", true, maxName)
	c.CameraAddress = f.str("camera_address", true, maxText)
	c.Latitude = f.str("latitude", true, maxShort)
	c.Longitude = f.str("longitude", true, maxShort)
	checkCoord(f, "latitude", c.Latitude, 90)
	checkCoord(f, "longitude", c.Longitude, 180)
	ct, okCT := f.oneOf("connection_type", true, []int{camera.RTSP, camera.RTMP, camera.P2P})
	c.ConnectionType = ct
	if id, ok := f.oneOf("resolution_id", true, s.cfg.Info.resolutionIDs()); ok {
		c.ResolutionID = id
		ci.resolution, _ = s.cfg.Info.resolution(id)
	}
	if d, ok := f.oneOf("history_days", true, s.cfg.Info.Plans.HistoryDays); ok {
		c.HistoryDays = d
	}
	if id, ok := f.integer("client_id", true); ok {
		if _, err := s.cfg.DB.Client(ctx, id); err != nil {
			errs.add("client_id", "does not exist")
		}
		c.ClientID = id
	}
	if ch, ok := f.integer("channel", false); ok {
		if ch < 0 || ch > 1024 {
			errs.add("channel", "must be between 0 and 1024")
		}
		c.Channel = int(ch)
	}
	if snd, ok := f.oneOf("sound", false, []int{0, 1}); ok {
		c.Sound = snd
	}
	// demo is no longer supported: whatever is sent is read as 0.
	typed := f.str("typed_url", false, 2048)
	if !okCT {
		return ci
	}
	switch ct {
	case camera.RTSP:
		if m, ok := f.oneOf("model_id", true, s.cfg.Info.modelIDs()); ok {
			c.ModelID = m
		}
		c.Stream = streamField(f, true)
		if typed != "" {
			ci.sourceURL = checkURL(f, "typed_url", typed, "rtsp", "rtsps")
			break
		}
		c.DNS = f.str("dns", true, maxText)
		c.Port = f.str("port", true, 5)
		c.User = f.str("user", true, maxText)
		pass := f.rawStr("pass", true, maxText)
		if p, err := strconv.Atoi(c.Port); c.Port != "" && (err != nil || p < 1 || p > 65535) {
			errs.add("port", "must be a port number between 1 and 65535")
		}
		if c.DNS != "" && (strings.ContainsAny(c.DNS, "/@?#: ") && net.ParseIP(c.DNS) == nil) {
			errs.add("dns", "must be a host name or an IP address")
		}
		model, okModel := s.cfg.Info.model(c.ModelID)
		if c.DNS != "" && c.Port != "" && c.User != "" && pass != "" && okModel && len(errs) == 0 {
			if model.RTSPPath == onvifPath {
				ci.sourceURL = onvifURL(c.DNS, c.Port, c.User, pass, c.Stream)
			} else {
				ci.sourceURL = rtspURL(c.DNS, c.Port, c.User, pass, model.RTSPPath, c.Channel, c.Stream)
			}
		}
	case camera.RTMP:
		if typed != "" {
			ci.sourceURL = checkURL(f, "typed_url", typed, "rtmp", "rtmps")
		}
	case camera.P2P:
		c.Stream = streamField(f, true)
		c.P2PSerial = f.str("p2p_serial_number", true, maxShort)
		ci.p2pPassword = f.rawStr("p2p_password", true, maxText)
	}
	if ct == camera.RTSP && c.Sound == 1 {
		c.Sound = 0 // sound applies to RTMP and P2P cameras only
	}
	if ci.sourceURL != "" && len(errs) == 0 {
		field := "typed_url"
		if typed == "" {
			field = "dns"
		}
		s.checkAddress(ctx, f, field, ci.sourceURL)
	}
	return ci
}

// checkCoord checks a decimal coordinate within ±limit.
func checkCoord(f *fields, k, v string, limit float64) {
	if v == "" {
		return
	}
	x, err := strconv.ParseFloat(strings.Replace(v, ",", ".", 1), 64)
	if err != nil || x < -limit || x > limit {
		f.errs.add(k, "must be a decimal number between -"+strconv.Itoa(int(limit))+" and "+strconv.Itoa(int(limit)))
	}
}

// streamField reads stream: "0" (main) or "1" (secondary).
func streamField(f *fields, required bool) string {
	v := f.str("stream", required, 1)
	if v != "" && v != "0" && v != "1" {
		f.errs.add("stream", "must be 0 (main) or 1 (secondary)")
		return ""
	}
	return v
}

// checkURL checks a full URL of one of schemes with a host.
func checkURL(f *fields, k, raw string, schemes ...string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		f.errs.add(k, "must be a URL with a host")
		return ""
	}
	for _, sc := range schemes {
		if strings.EqualFold(u.Scheme, sc) {
			return raw
		}
	}
	f.errs.add(k, "must be a "+strings.Join(schemes, " or ")+" URL")
	return ""
}

// rtspURL builds the RTSP URL of a camera from its parts and model path.
func rtspURL(host, port, user, pass, path string, channel int, stream string) string {
	if channel == 0 {
		channel = 1
	}
	if stream == "" {
		stream = "0"
	}
	stream1 := "1"
	if stream == "1" {
		stream1 = "2"
	}
	path = strings.NewReplacer("{channel}", strconv.Itoa(channel), "{stream}", stream, "{stream1}", stream1).Replace(path)
	u := url.URL{Scheme: "rtsp", User: url.UserPassword(user, pass), Host: net.JoinHostPort(host, port)}
	return u.String() + path
}

// onvifPath is the rtsp_path of models whose cameras are asked for their
// RTSP URL over ONVIF by the recording node (docs/onvif.md).
const onvifPath = "onvif"

// onvifURL is the source URL of such a camera: its ONVIF (HTTP) address,
// credentials and stream (0 main, 1 secondary).
func onvifURL(host, port, user, pass, stream string) string {
	if stream == "" {
		stream = "0"
	}
	u := url.URL{Scheme: "onvif", User: url.UserPassword(user, pass), Host: net.JoinHostPort(host, port), RawQuery: "stream=" + stream}
	return u.String()
}

// checkAddress refuses a URL whose host is, or resolves to, a loopback,
// private, link-local or otherwise internal address, unless private
// networks are allowed.
func (s *Server) checkAddress(ctx context.Context, f *fields, k, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		f.errs.add(k, "must be a valid URL")
		return
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		addrs, err = s.cfg.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			f.errs.add(k, "host "+host+" does not resolve")
			return
		}
	}
	for _, a := range addrs {
		if !camera.AddressAllowed(a, s.cfg.AllowPrivateNetworks) {
			f.errs.add(k, "points at a loopback, private or link-local address, which this service does not reach"+
				" (ingest.allow_private_networks allows them, for a trial on one machine)")
			return
		}
	}
}
