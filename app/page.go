package app

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/vigia/vigia/api"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/live"
	"github.com/vigia/vigia/storage"
)

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

type pageCamera struct {
	ID       string
	Status   string
	Size     string
	Error    string
	LiveURL  string
	Recorded string // "99.2 % of the last hour, 98.7 % of the last day", or ""
}

// clusterRecorded is the cluster's completeness on the page: the mean
// over the cameras whose status carries one.
type clusterRecorded struct {
	Hour, Day string
	Cameras   int
}

// percent writes a ratio as a percentage with one decimal.
func percent(r float64) string { return strconv.FormatFloat(100*r, 'f', 1, 64) + " %" }

// clusterCompleteness averages the completeness of every camera status in
// NATS; nil when none has one or NATS cannot be read.
func (a *App) clusterCompleteness(ctx context.Context) *clusterRecorded {
	if a.bus == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sts, _ := a.bus.ListStatus(ctx)
	var h, d float64
	n := 0
	for _, s := range sts {
		if s.Recorded != nil {
			h, d, n = h+s.Recorded.Hour, d+s.Recorded.Day, n+1
		}
	}
	if n == 0 {
		return nil
	}
	return &clusterRecorded{Hour: percent(h / float64(n)), Day: percent(d / float64(n)), Cameras: n}
}

// pageAllowed says whether r may see the node's recordings page: with an
// operator token in the query (`token`), or without one on a `serve` node
// (the one-machine development mode) when the client is on this machine
// (localClient). The address the node listens on plays no part.
func (a *App) pageAllowed(r *http.Request) bool {
	if a.mode.Name == "serve" && a.localClient(r) {
		return true
	}
	t := r.URL.Query().Get("token")
	if t == "" {
		return false
	}
	for _, ok := range a.opTokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(ok)) == 1 {
			return true
		}
	}
	return false
}

// localClient reports whether r comes from a client on this machine: its
// client address (api.ClientAddr through http.trusted_proxies) is a
// loopback one, and no proxy outside http.trusted_proxies forwarded it (a
// reverse proxy on this machine would make every client look local).
func (a *App) localClient(r *http.Request) bool {
	trusted := a.trustedProxies()
	return api.ClientAddr(r, trusted).IsLoopback() && !api.ForwardedUntrusted(r, trusted)
}

// trustedProxies returns http.trusted_proxies (Validate has checked it).
func (a *App) trustedProxies() []netip.Prefix {
	p, _ := config.ParsePrefixList(a.cfg.HTTP.TrustedProxies)
	return p
}

// indexPage lists the node's cameras with their status, plays their live
// stream and their recordings from storage.
func (a *App) indexPage(w http.ResponseWriter, r *http.Request) {
	if !a.pageAllowed(r) {
		http.Error(w, "this page needs ?token=OPERATOR_TOKEN", http.StatusUnauthorized)
		return
	}
	var cams []pageCamera
	if a.rec != nil {
		exp := time.Now().Add(12 * time.Hour)
		for _, id := range a.rec.Cameras() {
			st, ok := a.rec.Status(id)
			if !ok {
				continue
			}
			pc := pageCamera{ID: id, Status: st.Text, Error: st.LastError}
			if st.Width > 0 {
				pc.Size = strconv.Itoa(st.Width) + "x" + strconv.Itoa(st.Height)
			}
			if a.live != nil {
				pc.LiveURL = live.URL(a.URL(), a.keys, id, exp)
			}
			if r, ok := a.recorded(id); ok {
				pc.Recorded = percent(r.Hour) + " of the last hour, " + percent(r.Day) + " of the last day"
			}
			cams = append(cams, pc)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = pageTmpl.Execute(w, map[string]any{
		"Cameras": cams, "Node": a.cfg.NodeID, "Storage": a.store.Describe(),
		"Token": r.URL.Query().Get("token"), "HLS": a.api != nil,
		"Cluster": a.clusterCompleteness(r.Context()),
	})
}

// recording is one stored segment, as the recordings page reads it.
type recording struct {
	StartMs int64  `json:"start_ms"`
	DurMs   int64  `json:"dur_ms"`
	URL     string `json:"url"`
}

// recordingsJSON lists a camera's segments of the last hours (query
// `hours`, default 1, at most 24) with signed URLs, from the catalogue.
func (a *App) recordingsJSON(w http.ResponseWriter, r *http.Request) {
	if !a.pageAllowed(r) {
		http.Error(w, "operator token required", http.StatusUnauthorized)
		return
	}
	cam := r.PathValue("camera")
	if !storage.ValidCameraID(cam) {
		http.Error(w, "invalid camera id", http.StatusBadRequest)
		return
	}
	hours, _ := strconv.Atoi(r.URL.Query().Get("hours"))
	if hours <= 0 || hours > 24 {
		hours = 1
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	now := time.Now()
	segs, err := a.cat.Segments(ctx, cam, now.Add(-time.Duration(hours)*time.Hour), now)
	if err != nil {
		http.Error(w, "listing failed", http.StatusBadGateway)
		return
	}
	out := []recording{}
	for _, s := range segs {
		u, err := a.store.SignedURL(ctx, s.Key, time.Duration(a.cfg.Storage.SignedURLExpiry))
		if err != nil {
			continue
		}
		out = append(out, recording{StartMs: s.StartMs, DurMs: s.DurMs, URL: u})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
