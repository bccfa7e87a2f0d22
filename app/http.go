package app

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/vigia/vigia/api"
	"github.com/vigia/vigia/camevents"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/connlimit"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/player"
)

// serveHTTP starts the node's HTTP endpoints: /healthz, /readyz, /metrics,
// the signed media URLs of the fs backend and the recordings page.
func (a *App) serveHTTP() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.Handle("GET /metrics", api.MetricsAccess(a.readyzDetails, a.cfg.HTTP.MetricsToken, promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{})))
	if a.media != nil {
		mux.Handle("GET /media/", http.StripPrefix("/media", a.media))
	}
	if a.live != nil {
		mux.Handle("GET /live/", a.live.Handler())
	}
	if a.webrtc != nil {
		a.webrtc.Register(mux)
	}
	if a.onvif != nil {
		mux.Handle(camevents.NotifyPattern, a.onvif.NotifyHandler())
	}
	if a.api != nil {
		a.api.srv.Register(mux)
	}
	a.nodePage().Register(mux)
	hc := a.cfg.HTTP
	a.http = httpServer(a.instrumentHTTP(mux), hc)
	a.http.ErrorLog = zap.NewStdLog(a.log.With(zap.String("component", "http")))
	ln := connlimit.NewListener(a.listener, hc.MaxConnections, hc.MaxConnectionsPerAddress,
		a.rejectedConnections("http", []string{connlimit.ReasonMaxConnections, connlimit.ReasonPerAddress}))
	if proxies := a.trustedProxies(); len(proxies) > 0 {
		ln.Exempt = func(addr net.Addr) bool {
			ap, err := netip.ParseAddrPort(addr.String())
			return err == nil && slices.ContainsFunc(proxies, func(p netip.Prefix) bool { return p.Contains(ap.Addr().Unmap()) })
		}
	}
	a.httpDone = make(chan struct{})
	go func() {
		defer close(a.httpDone)
		if err := a.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", zap.Error(err))
		}
	}()
}

// nodePage is the node's recordings page: cameras from the recorder,
// segments from the catalogue, the cluster's completeness from the status
// records; operator tokens, or none from this machine with Mode.LocalAccess.
func (a *App) nodePage() *player.NodePage {
	p := &player.NodePage{
		Allowed:         api.PageAccess(a.opTokens, a.trustedProxies(), a.mode.LocalAccess, a.publicHost()),
		Node:            a.cfg.NodeID,
		Store:           a.store,
		SignedURLExpiry: time.Duration(a.cfg.Storage.SignedURLExpiry),
		LiveURLExpiry:   time.Duration(a.cfg.Security.LiveURLExpiry),
		Segments:        a.cat.Segments,
		Recorded:        a.recorded,
		HLS:             a.api != nil,
	}
	if a.rec != nil {
		p.Cameras = a.rec
	}
	if a.live != nil {
		p.LiveURL = a.LiveURL
	}
	if a.bus != nil {
		p.Statuses = a.bus.ListStatus
	}
	return p
}

// publicHost returns the host of http.public_url, "" when unreadable.
func (a *App) publicHost() string {
	u, err := url.Parse(a.cfg.HTTP.PublicURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// trustedProxies returns http.trusted_proxies (Validate has checked it).
func (a *App) trustedProxies() []netip.Prefix {
	p, _ := config.ParsePrefixList(a.cfg.HTTP.TrustedProxies)
	return p
}

// httpServer returns the node's HTTP server for h with the time and size
// limits of hc. ReadTimeout bounds headers and body together; net/http
// lifts it once the body has been read, so it never cuts a long response
// (video downloads, live video) nor cancels its request's context.
func httpServer(h http.Handler, hc config.HTTPConfig) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: time.Duration(hc.ReadHeaderTimeout),
		ReadTimeout:       time.Duration(hc.ReadTimeout),
		IdleTimeout:       time.Duration(hc.IdleTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// maxHeaderBytes bounds a request's headers (net/http's default is 1 MiB).
// Vigia's requests carry at most a token and a signed query string (under
// 2 KiB); 64 KiB leaves room for proxies' headers while a slow client
// holding http.max_connections_per_address connections for the header
// timeout pins 16 MiB, not 256.
const maxHeaderBytes = 64 << 10

// rejectedConnections returns the function a listener calls when it closes
// a connection for a limit: it counts it in
// vigia_rejected_connections_total{listener, reason}, every reason of the
// listener exported from 0.
func (a *App) rejectedConnections(listener string, reasons []string) func(reason string) {
	return metrics.RejectedConnections(a.reg, listener, reasons)
}

// readiness is the body of /readyz.
type readiness struct {
	Ready   bool     `json:"ready"`
	Storage string   `json:"storage,omitempty"`
	NATS    string   `json:"nats,omitempty"`
	Errors  []string `json:"errors,omitempty"`
	// Thumbnails is "available", or says why thumbnails, snapshots and
	// motion detection are not (a build without cgo, no decoder process);
	// empty without a recorder.
	Thumbnails string `json:"thumbnails,omitempty"`
}

func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	res := readiness{Ready: true, Storage: a.store.Describe(), NATS: a.bus.Describe()}
	if a.thumbs != nil {
		res.Thumbnails = a.thumbs.svc.Status()
	}
	if err := a.store.Ping(ctx); err != nil {
		res.Ready = false
		res.Errors = append(res.Errors, "storage: "+err.Error())
	}
	if err := a.bus.Ping(ctx); err != nil {
		// A node that serves only the API keeps serving what needs the
		// database and storage while NATS is down (docs/operations.md): it
		// stays ready, naming NATS in its errors.
		if a.api == nil || a.rec != nil {
			res.Ready = false
		}
		res.Errors = append(res.Errors, "nats: "+err.Error())
	}
	if a.node != nil {
		if err := a.node.Err(); err != nil {
			res.Ready = false
			res.Errors = append(res.Errors, "cluster: "+err.Error())
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !res.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if !a.readyzDetails(r) {
		// The storage, the NATS address and the errors are for the
		// operator; a probe reads the status code.
		res = readiness{Ready: res.Ready}
	}
	_ = json.NewEncoder(w).Encode(res)
}

// readyzDetails reports whether r may read the details of /readyz: with
// an operator token (?token=), or from this machine on a node with
// Mode.LocalAccess, as the recordings page (api.PageAccess).
func (a *App) readyzDetails(r *http.Request) bool {
	return api.PageAccess(a.opTokens, a.trustedProxies(), a.mode.LocalAccess, a.publicHost())(r)
}
