package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"go.uber.org/zap"
)

// P2PDevice is a synthetic P2P camera of a P2PGateway.
type P2PDevice struct {
	// Serial number of the device.
	Serial string

	// Password of the device.
	Password string

	// Codec is CodecH264 (default) or CodecH265.
	Codec string

	// Audio adds AAC audio.
	Audio bool
}

// P2PGatewayConfig configures a P2PGateway.
type P2PGatewayConfig struct {
	// Addr of the RTSP server. It defaults to "127.0.0.1:0".
	Addr string

	// User every device is reached with. It defaults to "admin".
	User string

	// Devices served.
	Devices []P2PDevice

	// Log, optional.
	Log *zap.Logger
}

// P2PGateway stands in for a vendor P2P gateway: an RTSP server whose
// paths are {serial}/{stream} (stream 0 main at 720p, 1 secondary at
// 360p), each protected by the device's password, plus an HTTP lookup
// handler. Vigia reaches it through p2p.resolver exactly as it would a
// real gateway.
type P2PGateway struct {
	cfg P2PGatewayConfig
	srv *Server

	mu      sync.Mutex
	devices map[string]P2PDevice
}

// NewP2PGateway returns a gateway; Start serves it.
func NewP2PGateway(cfg P2PGatewayConfig) *P2PGateway {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.User == "" {
		cfg.User = "admin"
	}
	g := &P2PGateway{cfg: cfg, devices: map[string]P2PDevice{}}
	var specs []CameraSpec
	for _, d := range cfg.Devices {
		g.devices[d.Serial] = d
		for stream, small := range []bool{false, true} {
			specs = append(specs, CameraSpec{Path: fmt.Sprintf("%s/%d", d.Serial, stream), Codec: d.Codec, Audio: d.Audio,
				Small: small, User: cfg.User, Pass: d.Password})
		}
	}
	g.srv = NewServer(Config{Addr: cfg.Addr, Cameras: specs, Log: cfg.Log})
	return g
}

// Start serves the devices.
func (g *P2PGateway) Start() error { return g.srv.Start() }

// Close stops the gateway.
func (g *P2PGateway) Close() { g.srv.Close() }

// RTSP returns the gateway's RTSP server (for faults and observation).
func (g *P2PGateway) RTSP() *Server { return g.srv }

// Template returns the p2p.resolver URL template of the gateway.
func (g *P2PGateway) Template() string {
	return "rtsp://{user}:{password}@" + g.srv.Addr() + "/{serial}/{stream}"
}

// LookupHandler answers the HTTP lookup protocol of ingest/p2p: a POST of
// {"serial","password","stream"} gets {"url"} (200), 401 for a wrong
// password, 404 for an unknown serial or stream.
func (g *P2PGateway) LookupHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Serial, Password, Stream string
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		d, ok := g.devices[req.Serial]
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case !ok || (req.Stream != "0" && req.Stream != "1"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"unknown device"}`))
			return
		case req.Password != d.Password:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"wrong password"}`))
			return
		}
		u := url.URL{Scheme: "rtsp", User: url.UserPassword(g.cfg.User, d.Password), Host: g.srv.Addr(), Path: "/" + d.Serial + "/" + req.Stream}
		_ = json.NewEncoder(w).Encode(map[string]string{"url": u.String()})
	})
}
