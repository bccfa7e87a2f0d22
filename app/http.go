package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
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
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{}))
	if a.media != nil {
		mux.Handle("GET /media/", http.StripPrefix("/media", a.media))
	}
	if a.live != nil {
		mux.Handle("GET /live/", a.live.Handler())
	}
	if a.api != nil {
		a.api.srv.Register(mux)
	}
	mux.HandleFunc("GET /{$}", a.indexPage)
	mux.HandleFunc("GET /recordings/{camera}", a.recordingsJSON)
	a.http = &http.Server{
		Handler:           a.instrumentHTTP(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          zap.NewStdLog(a.log.With(zap.String("component", "http"))),
	}
	a.httpDone = make(chan struct{})
	go func() {
		defer close(a.httpDone)
		if err := a.http.Serve(a.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", zap.Error(err))
		}
	}()
}

// readiness is the body of /readyz.
type readiness struct {
	Ready   bool     `json:"ready"`
	Storage string   `json:"storage"`
	NATS    string   `json:"nats"`
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
		res.Thumbnails = a.thumbnailsStatus()
	}
	if err := a.store.Ping(ctx); err != nil {
		res.Ready = false
		res.Errors = append(res.Errors, "storage: "+err.Error())
	}
	if err := a.bus.Ping(ctx); err != nil {
		res.Ready = false
		res.Errors = append(res.Errors, "nats: "+err.Error())
	}
	if a.node != nil {
		if err := a.node.Err(); err != nil {
			res.Ready = false
			res.Errors = append(res.Errors, "cluster: "+err.Error())
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if !res.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(res)
}
