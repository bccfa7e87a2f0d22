package player

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
	"strings"
	"time"
)

// Params is what the API hands the page of one camera.
type Params struct {
	// CameraID is the camera's id.
	CameraID string

	// CameraName is the camera's description, shown in the header.
	CameraName string

	// LiveURL is the camera's live address, with whatever signature it
	// needs: a WHEP endpoint (path ending in /whep), played over WebRTC
	// with the LL-HLS playlist beside it (index.m3u8 for whep) as fallback,
	// or an HLS playlist. Empty means live playback is unavailable; the
	// page says so and still plays recordings.
	LiveURL string

	// LiveRenewURL, optional, answers a fresh LiveURL as the live URL
	// operation does ({"code": 0, "data": "…"}). Live URLs carry a
	// short-lived token (exp, sig in the query): the page renews its URL
	// through this address halfway to its exp, and every request of the
	// live stream carries the newest token.
	LiveRenewURL string

	// VODURL is the address of the camera's recorded playlists (a
	// VODHandler), with its authentication parameters, e.g.
	// "/api/camera/7/vod.m3u8?player_digest=…". The page adds from and to
	// (Unix milliseconds) to it.
	VODURL string

	// TimelineURL is the address of the camera's timeline
	// (TimelineHandler) with its authentication parameters; the page adds
	// from and to. Empty: the timeline shows the highlight ranges only.
	TimelineURL string

	// ThumbsURL is the address of the camera's minute thumbnails
	// (ThumbsHandler) with its authentication parameters, for the preview
	// strip. Empty: no preview.
	ThumbsURL string

	// VideosURL is the address of the camera's ready downloadable videos
	// with their signed manifests ({"videos": [{id, description,
	// start_at, end_at, url, manifest, manifest_sig}], "key_url"}), with
	// its authentication parameters. Empty: the page has no videos list.
	VideosURL string

	// AssetsURL is where Assets is mounted, ending in "/". It defaults to
	// "/api/player/".
	AssetsURL string

	// Status is the camera's status when the page is made; one other than
	// ONLINE is shown over the video with its reason. LiveRenewURL's
	// answers may carry a newer one ("status").
	Status Status

	// Now is the server's time, for the timeline. It defaults to time.Now().
	Now time.Time

	// Query holds the parsed player parameters (ParseQuery).
	Query Query
}

//go:embed web/page.html
var pageHTML string

//go:embed web/player.js
var playerJS string

//go:embed web/live-webrtc.js
var webrtcJS string

//go:embed web/playability.js
var playabilityJS string

//go:embed web/player.css
var playerCSS string

//go:embed web/timeline.js
var timelineJS string

// Status is a camera's status as the page shows it.
type Status struct {
	// Text is the status text (ONLINE, OFFLINE, ERRO PERMANENTE, ...);
	// empty when not known.
	Text string `json:"text"`
	// Reason is why the status is not ONLINE, a gap cause (camera_auth,
	// stream_unsupported, camera_offline, camera_blocked); may be empty.
	Reason string `json:"reason,omitempty"`
	// Detail is the reason's fixed text ("bad credentials").
	Detail string `json:"detail,omitempty"`
}

// pageTmpl is parsed once; templates are safe for concurrent use.
var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// pageConfig is the page's JSON data block, read by player.js.
type pageConfig struct {
	Camera    string    `json:"camera"`
	Name      string    `json:"name"`
	LiveURL   string    `json:"liveUrl"`
	RenewURL  string    `json:"liveRenewUrl"`
	VODURL    string    `json:"vodUrl"`
	Timeline  string    `json:"timelineUrl"`
	Thumbs    string    `json:"thumbsUrl"`
	Videos    string    `json:"videosUrl"`
	Live      bool      `json:"live"`
	StartMs   int64     `json:"startMs"`
	WindowMs  int64     `json:"windowMs"`
	Speed     float64   `json:"speed"`
	Speeds    []float64 `json:"speeds"`
	Controls  bool      `json:"controls"`
	Footer    bool      `json:"footer"`
	Ranges    []Range   `json:"ranges"`
	NowMs     int64     `json:"nowMs"`
	HasBundle bool      `json:"hasBundle"`
	Status    Status    `json:"status"`
	// FitWindow: the window was not asked for (no timeline_interval), so
	// the live page narrows it to what the camera has recorded.
	FitWindow bool `json:"fitWindow"`
}

// pageData is the template's input.
type pageData struct {
	Title      string
	BodyClass  string
	ScriptURL  string
	Config     pageConfig
	CSS        template.CSS
	RTCJS      template.JS
	PlayJS     template.JS
	JS         template.JS
	TimelineJS template.JS
}

// Page writes the player page of p. The page plays p.LiveURL over WebRTC
// or with hls.js in live mode (ts absent or 0) and, from TS minus Delay, the recorded playlist
// of p.VODURL; its timeline shows the recorded segments of the window and
// the highlight ranges, and a click on it seeks there. Every value from the
// request reaches the page through html/template contexts or the JSON data
// block; colours are validated by ParseQuery. The timeline (web/timeline.js)
// draws what TimelineURL answers: recorded spans, gaps shaded by cause,
// event markers, and a strip of ThumbsURL's thumbnails while scrubbing.
func Page(w http.ResponseWriter, r *http.Request, p Params) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	assets := p.AssetsURL
	if assets == "" {
		assets = "/api/player/"
	}
	if !strings.HasSuffix(assets, "/") {
		assets += "/"
	}
	q := p.Query
	if q.Window == 0 {
		q.Window = 24 * time.Hour
	}
	if q.Speed == 0 {
		q.Speed = 1
	}
	cfg := pageConfig{
		Camera: p.CameraID, Name: p.CameraName, LiveURL: p.LiveURL, RenewURL: p.LiveRenewURL, VODURL: p.VODURL,
		Timeline: p.TimelineURL, Thumbs: p.ThumbsURL, Videos: p.VideosURL,
		Live: q.TS == 0, WindowMs: q.Window.Milliseconds(), Speed: q.Speed, Speeds: Speeds(),
		Controls: q.Controls, Footer: q.Footer, Ranges: q.Ranges, NowMs: now.UnixMilli(),
		HasBundle: HasBundle(), Status: p.Status, FitWindow: !r.URL.Query().Has("timeline_interval"),
	}
	if cfg.Ranges == nil {
		cfg.Ranges = []Range{}
	}
	if start, ok := q.StartTime(); ok {
		cfg.StartMs = start.UnixMilli()
	}
	var classes []string
	for _, c := range []struct {
		on   bool
		name string
	}{
		{!q.Controls, "no-controls"}, {!q.Footer, "no-footer"}, {q.HideFooter, "hide-footer"},
		{q.HideHeader, "hide-header"}, {q.FixFullScreen, "fix-fullscreen"},
	} {
		if c.on {
			classes = append(classes, c.name)
		}
	}
	title := p.CameraName
	if title == "" {
		title = "Camera " + p.CameraID
	}
	data := pageData{
		Title:      title,
		BodyClass:  strings.Join(classes, " "),
		ScriptURL:  assets + bundleName + "?v=" + loadBundle().version,
		Config:     cfg,
		CSS:        template.CSS(playerCSS),    // a constant of this package
		RTCJS:      template.JS(webrtcJS),      // a constant of this package
		PlayJS:     template.JS(playabilityJS), // a constant of this package
		JS:         template.JS(playerJS),      // a constant of this package
		TimelineJS: template.JS(timelineJS),    // a constant of this package
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, data); err != nil {
		http.Error(w, "player page failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(buf.Bytes())
}
