package app

import (
	"cmp"
	"context"
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
		Claim:         a.pushClaim(),
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

// PushURL returns the rtmp_url of a push camera recorded by this node
// (rtmp.PublicPush): at rtmp.public_host, the port the push server
// listens on (rtmp.addr until it listens).
func (a *App) PushURL(camera string) string {
	addr := a.cfg.RTMP.Addr
	if a.rtmp != nil {
		addr = cmp.Or(a.rtmp.Addr(), addr)
	}
	return rtmp.PublicPush{Host: a.cfg.RTMP.PublicHost, PublicURL: a.URL(), Addr: addr}.URL(a.secret, camera)
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

// pushClaim returns the push server's Claim: on a cluster node, the
// cluster takes the lease of a push camera whose publisher connects here
// (cluster.Node.Claim), which starts its push source; elsewhere none, and
// the server accepts only the push cameras this node records.
func (a *App) pushClaim() func(ctx context.Context, camera string) error {
	if !a.mode.Cluster {
		return nil
	}
	return func(ctx context.Context, camera string) error { return a.node.Claim(ctx, camera) }
}
