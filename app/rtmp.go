package app

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp"
	"github.com/vigia/vigia/ingest/rtmp/wire"
	"github.com/vigia/vigia/ingest/rtsp"
	"github.com/vigia/vigia/metrics"
)

// ingestDrivers builds the source drivers of the recorder by URL scheme:
// RTSP, RTMP pull, RTMP push (through the node's push server, which it
// creates) and P2P (resolved to one of the others).
func (a *App) ingestDrivers(decodeErr func(error)) ingest.Registry {
	rtspLog := a.log.With(zap.String("component", "rtsp"))
	rtmpLog := a.log.With(zap.String("component", "rtmp"))
	m := metrics.NewRTMP(a.reg)
	conns, refused, errs := m.Connections, m.Refused, m.Errors
	rc := a.cfg.RTMP
	a.rtmp = rtmp.NewServer(rtmp.ServerConfig{
		Addr:                 rc.Addr,
		Keys:                 a.keys,
		ReadTimeout:          time.Duration(a.cfg.Ingest.ReadTimeout),
		AuthTimeout:          time.Duration(rc.AuthTimeout),
		MaxConns:             rc.MaxConnections,
		MaxPendingPerAddress: rc.MaxPendingPerAddress,
		PreAuth: wire.Limits{
			MaxMessageSize: int(rc.PreAuthMaxMessage),
			MaxBuffered:    2 * int(rc.PreAuthMaxMessage),
		},
		PreAuthBudget: int64(rc.PreAuthBudget),
		OnConnection:  conns.Inc,
		OnRefused:     func(r string) { refused.WithLabelValues(r).Inc() },
		OnError:       func(r string) { errs.WithLabelValues(r).Inc() },
		OnRejected:    a.rejectedConnections("rtmp", rtmp.RejectedReasons),
		OnDecodeError: decodeErr,
		Claim:         a.claimPush,
		KeyGen:        a.pushKeyGen,
		Log:           rtmpLog,
	})
	reg := ingest.Registry{
		"rtsp":      rtsp.Driver(rtspLog, decodeErr),
		"rtsps":     rtsp.Driver(rtspLog, decodeErr),
		"rtmp":      rtmp.Driver(rtmpLog, decodeErr),
		"rtmps":     rtmp.Driver(rtmpLog, decodeErr),
		"rtmp-push": rtmp.PushDriver(a.rtmp),
	}
	reg["p2p"] = a.p2pDriver(reg)
	return reg
}

// RTMPServer returns the node's RTMP push server, nil when the mode has no
// recorder. It listens once a push camera runs (or after Listen).
func (a *App) RTMPServer() *rtmp.Server { return a.rtmp }

// PushURL returns the rtmp_url of a push camera recorded by this node:
// rtmp://{rtmp.public_host or the host of http.public_url}:{port of
// rtmp.addr}/live/{camera}?key={key}.
func (a *App) PushURL(camera string) string {
	host := a.cfg.RTMP.PublicHost
	if host == "" {
		if u, err := url.Parse(a.URL()); err == nil {
			host = u.Hostname()
		}
	}
	addr := a.cfg.RTMP.Addr
	if a.rtmp != nil && a.rtmp.Addr() != "" {
		addr = a.rtmp.Addr()
	}
	_, p, _ := net.SplitHostPort(addr)
	port, err := strconv.Atoi(p)
	if err != nil || port == 0 {
		port = 1935
	}
	return rtmp.PushURL(host, port, a.secret, camera)
}

// pushKeyGen is the generation of a push camera's stream key in the
// registry (0 for a camera it does not hold).
func (a *App) pushKeyGen(ctx context.Context, camera string) (int, error) {
	if a.bus == nil {
		return 0, nil
	}
	c, _, err := a.bus.GetCamera(ctx, camera)
	return c.PushKeyGen, err
}

// claimPush moves a push camera to this node when its publisher connects
// here: the cluster takes its lease, which starts the camera's push source.
func (a *App) claimPush(ctx context.Context, camera string) error {
	if a.node == nil {
		return errors.New("no cluster: only cameras this node records are accepted")
	}
	return a.node.Claim(ctx, camera)
}
