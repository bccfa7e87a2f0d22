package player

import (
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// NodePage serves a node's recordings page: GET / lists the node's
// cameras with their status, plays their live stream and their recordings
// of the last hours from storage, which it lists at GET
// /recordings/{camera}. Like Page it does no authentication of its own:
// Allowed decides who may see it.
type NodePage struct {
	// Allowed says whether a request may see the page and its lists; one
	// it refuses is answered 401. Required.
	Allowed func(*http.Request) bool

	// Node is the node's id, in the title.
	Node string

	// Store signs the segments' URLs and describes the storage on the
	// page. Required.
	Store storage.Store

	// SignedURLExpiry is how long a segment's signed URL is valid.
	SignedURLExpiry time.Duration

	// Segments lists a camera's segments between two times (the
	// catalogue's Segments). Required.
	Segments func(ctx context.Context, camera string, from, to time.Time) ([]catalogue.Segment, error)

	// Cameras lists the cameras the node records and their status; nil on
	// a node that records none.
	Cameras Cameras

	// Recorded gives a camera's completeness over the last hour and day;
	// nil or false: the page shows none.
	Recorded func(camera string) (status.Completeness, bool)

	// LiveURL returns a camera's signed live playlist, valid until exp;
	// nil on a node without live playback.
	LiveURL func(camera string, exp time.Time) string

	// LiveURLExpiry is how long the live URLs the page hands out are
	// valid (security.live_url_expiry); the page renews them at
	// /live-url/{camera} halfway. It defaults to 2 minutes.
	LiveURLExpiry time.Duration

	// Statuses lists the status records of every camera of the cluster,
	// for its completeness figure; nil: no figure.
	Statuses func(ctx context.Context) ([]status.Status, error)

	// HLS says the API serves hls.js at /api/player/hls.min.js, which
	// the page loads.
	HLS bool
}

// Cameras is what NodePage reads of the node's recorder.
type Cameras interface {
	// Cameras returns the ids of the cameras recorded.
	Cameras() []string
	// Status returns a camera's status; false when it is not recorded.
	Status(id string) (status.Status, bool)
}

// Register mounts the page and its lists on mux.
func (p *NodePage) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", p.index)
	mux.HandleFunc("GET /recordings/{camera}", p.recordings)
	mux.HandleFunc("GET /live-url/{camera}", p.liveURL)
}

// liveExpiry returns the expiry of a live URL handed out now.
func (p *NodePage) liveExpiry() time.Time {
	d := p.LiveURLExpiry
	if d <= 0 {
		d = 2 * time.Minute
	}
	return time.Now().Add(d)
}

// liveURL answers a camera's live URL, fresh, as {"url": …}: what the
// page renews its live playback with.
func (p *NodePage) liveURL(w http.ResponseWriter, r *http.Request) {
	if !p.Allowed(r) {
		http.Error(w, "operator token required", http.StatusUnauthorized)
		return
	}
	cam := r.PathValue("camera")
	if p.LiveURL == nil || p.Cameras == nil {
		http.NotFound(w, r)
		return
	}
	if _, ok := p.Cameras.Status(cam); !ok {
		http.Error(w, "camera not recorded by this node", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]string{"url": p.LiveURL(cam, p.liveExpiry())})
}

//go:embed web/node_page.html
var nodePageHTML string

var nodePageTmpl = template.Must(template.New("node").Parse(nodePageHTML))

type nodePageCamera struct {
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

// clusterCompleteness averages the completeness of every camera status of
// the cluster; nil when none has one or they cannot be read.
func (p *NodePage) clusterCompleteness(ctx context.Context) *clusterRecorded {
	if p.Statuses == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sts, _ := p.Statuses(ctx)
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

// index lists the node's cameras with their status, plays their live
// stream and their recordings from storage.
func (p *NodePage) index(w http.ResponseWriter, r *http.Request) {
	if !p.Allowed(r) {
		http.Error(w, "this page needs ?token=OPERATOR_TOKEN", http.StatusUnauthorized)
		return
	}
	var cams []nodePageCamera
	if p.Cameras != nil {
		exp := p.liveExpiry()
		for _, id := range p.Cameras.Cameras() {
			st, ok := p.Cameras.Status(id)
			if !ok {
				continue
			}
			pc := nodePageCamera{ID: id, Status: st.Text, Error: st.LastError}
			if st.Width > 0 {
				pc.Size = strconv.Itoa(st.Width) + "x" + strconv.Itoa(st.Height)
			}
			if p.LiveURL != nil {
				pc.LiveURL = p.LiveURL(id, exp)
			}
			if p.Recorded != nil {
				if r, ok := p.Recorded(id); ok {
					pc.Recorded = percent(r.Hour) + " of the last hour, " + percent(r.Day) + " of the last day"
				}
			}
			cams = append(cams, pc)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = nodePageTmpl.Execute(w, map[string]any{
		"Cameras": cams, "Node": p.Node, "Storage": p.Store.Describe(),
		"Token": r.URL.Query().Get("token"), "HLS": p.HLS,
		"Cluster": p.clusterCompleteness(r.Context()),
	})
}

// recording is one stored segment, as the recordings page reads it.
type recording struct {
	StartMs int64  `json:"start_ms"`
	DurMs   int64  `json:"dur_ms"`
	URL     string `json:"url"`
}

// recordings lists a camera's segments of the last hours (query `hours`,
// default 1, at most 24) with signed URLs.
func (p *NodePage) recordings(w http.ResponseWriter, r *http.Request) {
	if !p.Allowed(r) {
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
	segs, err := p.Segments(ctx, cam, now.Add(-time.Duration(hours)*time.Hour), now)
	if err != nil {
		http.Error(w, "listing failed", http.StatusBadGateway)
		return
	}
	out := []recording{}
	for _, s := range segs {
		u, err := p.Store.SignedURL(ctx, s.Key, p.SignedURLExpiry)
		if err != nil {
			continue
		}
		out = append(out, recording{StartMs: s.StartMs, DurMs: s.DurMs, URL: u})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
