package e2e

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// This file holds the access attacks against a whole node (recorder,
// cluster, API, embedded NATS, SQLite, MinIO, a synthetic camera): a
// blocked user replaying every address it received, the player renewing
// its short-lived live URL, and the `serve` recordings page behind a
// proxy.

// noFollow reads answers without following redirects.
var noFollow = &http.Client{
	Timeout:       15 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// address is one address handed to a user.
type address struct {
	name, url string
}

// statusOf GETs u without following a redirect; 0 when it cannot be read.
func statusOf(u string) (int, string, string) {
	res, err := noFollow.Get(u)
	if err != nil {
		return 0, "", ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, string(b), res.Header.Get("Location")
}

// accessNode starts a node wired like `vigia serve` (recorder, cluster,
// API) on MinIO, with short storage and live URL lifetimes, recording one
// synthetic camera created through the API; it returns the node, the
// user's token and id, and the camera id.
func accessNode(t *testing.T, urlLife, liveLife time.Duration) (a *app.App, api apiClient, token, userID, cam string) {
	t.Helper()
	m := testenv.SharedMinIO(t)
	synthCam := startSynth(t, synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw"})
	c := s3Config(t, m)
	c.OperatorToken = apiOperator
	c.Ingest.AllowPrivateNetworks = true
	c.Storage.SignedURLExpiry = config.Duration(urlLife)
	c.Security.LiveURLExpiry = config.Duration(liveLife)
	c.Motion.Enabled = false
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	log, _ := testLogger(t)
	a = startMode(t, c, app.Mode{Name: "test", Recorder: true, Cluster: true, API: true}, log)
	api = apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator
	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Acme", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 1, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "client", v).(map[string]any)
	user := one(t, "user", client["users"]).(map[string]any)
	token, userID = user["api_token"].(string), strconv.Itoa(int(user["id"].(float64)))
	host, port, _ := strings.Cut(synthCam.Addr(), ":")
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "Gate", "camera_address": "a", "latitude": "1", "longitude": "1",
		"connection_type": 0, "resolution_id": 2, "history_days": 1, "client_id": client["id"], "model_id": 3, "stream": "0",
		"dns": host, "port": port, "user": "admin", "pass": "pw"}, 201)
	cam = strconv.Itoa(int(one(t, "camera", v).(map[string]any)["id"].(float64)))
	testenv.WaitFor(t, 30*time.Second, "camera ONLINE", func() bool {
		data := api.call("GET", "/api/v4/cameras?token="+token, nil, 200).(map[string]any)["data"].([]any)
		return len(data) == 1 && data[0].(map[string]any)["stream_status_desc"] == "ONLINE"
	})
	waitSegments(t, a.Store(), cam, 2, 30*time.Second)
	return a, api, token, userID, cam
}

// gather collects, as the user of token, every address the node hands out
// for camera cam: the API's (player page, recorded playlists, their segment
// addresses, the player's live renewal, the digest routes) and those that
// live outside the API's checks: storage URLs (recordings, thumbnails,
// snapshot, the segments' redirect targets) and live addresses (playlist,
// init part and segment on the recording node).
func gather(t *testing.T, a *app.App, api apiClient, token, cam string) (apiURLs, outside []address) {
	t.Helper()
	now := time.Now()
	for _, put := range []string{storage.SnapshotKey(cam, now), storage.MinuteThumbKey(cam, now)} {
		if err := a.Store().Put(t.Context(), put, strings.NewReader("jpeg"), 4, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The live stream is started first (its first request waits for a
	// keyframe), so its short-lived URL below is read at once.
	warm := api.call("GET", "/api/camera/"+cam+"/live-url?p=hls&token="+token, nil, 200).(map[string]any)["data"].(string)
	testenv.WaitFor(t, 20*time.Second, "live stream started", func() bool { s, _, _ := statusOf(warm); return s == 200 })

	// The LL-HLS form of live_url (p=hls): its addresses can be read with
	// GET; the WebRTC form carries the same token (live.WHEPURL).
	listed := api.call("GET", "/api/v4/cameras?p=hls&token="+token, nil, 200).(map[string]any)["data"].([]any)[0].(map[string]any)
	digest, hash, pd := listed["digest"].(string), listed["hash"].(string), url.QueryEscape(listed["player_digest"].(string))
	since := strconv.FormatInt(now.Add(-time.Minute).UnixMilli(), 10)
	ts := strconv.FormatInt(now.Unix(), 10)
	base := a.URL()
	apiURLs = []address{
		{"player page", base + "/api/camera/" + cam + "/player?player_digest=" + pd},
		{"recorded playlist", base + "/api/camera/" + cam + "/vod.m3u8?player_digest=" + pd + "&from=" + since + "&to=" + strconv.FormatInt(now.UnixMilli(), 10)},
		{"player live renewal", base + "/api/camera/" + cam + "/player/live-url?player_digest=" + pd},
		{"recordings", base + "/camera/" + cam + "/recordings?token=" + token + "&digest=" + digest + "&timeStamp=" + since},
		{"recordings by hash", base + "/cameras/" + cam + "/recordings/?token=" + token + "&hash=" + hash + "&timeStamp=" + since},
		{"minute thumbnails", base + "/api/camera/" + cam + "/thumbs-minutes?token=" + token + "&digest=" + digest + "&ts=" + ts},
		{"snapshot", base + "/api/v1/cameras/" + cam + "/print?token=" + token + "&digest=" + digest},
		{"live url", base + "/api/camera/" + cam + "/live-url?token=" + token},
		{"listing", base + "/api/v4/cameras?token=" + token},
	}
	outside = []address{{"listing live_url", listed["live_url"].(string)}, {"listing thumb_url", listed["thumb_url"].(string)}}
	// The live media playlist, its init part and its first segment.
	outside = append(outside, liveAddresses(t, listed["live_url"].(string))...)
	// The player page's own addresses.
	_, page, _ := statusOf(apiURLs[0].url)
	m := regexp.MustCompile(`id="vigia-config">([^<]*)<`).FindStringSubmatch(page)
	var pc struct {
		VOD   string `json:"vodUrl"`
		Renew string `json:"liveRenewUrl"`
		Live  string `json:"liveUrl"`
	}
	if m == nil || json.Unmarshal([]byte(html.UnescapeString(m[1])), &pc) != nil || pc.Live == "" {
		t.Fatalf("player page: %.300s", page)
	}
	apiURLs = append(apiURLs, address{"page's live renewal", base + pc.Renew})
	outside = append(outside, address{"page's live URL", strings.Replace(pc.Live, "/whep?", "/index.m3u8?", 1)})
	// Recorded playlist: its segment addresses and their redirect targets.
	_, vod, _ := statusOf(apiURLs[1].url)
	for _, line := range strings.Split(vod, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		apiURLs = append(apiURLs, address{"recorded segment", base + line})
		if s, _, loc := statusOf(base + line); s == http.StatusFound {
			outside = append(outside, address{"recorded segment storage URL", loc})
		}
		break
	}
	// Storage URLs of the listings.
	recs := api.call("GET", strings.TrimPrefix(apiURLs[3].url, base), nil, 200).(map[string]any)["DATA"].([]any)
	thumbs := api.call("GET", strings.TrimPrefix(apiURLs[5].url, base), nil, 200).([]any)
	snap := api.call("GET", strings.TrimPrefix(apiURLs[6].url, base), nil, 200).(map[string]any)
	if len(recs) == 0 || len(thumbs) == 0 || snap["print"] == "" {
		t.Fatalf("listings: %d recordings, %d thumbnails, snapshot %v", len(recs), len(thumbs), snap)
	}
	outside = append(outside, address{"recording URL", recs[0].(map[string]any)["url"].(string)},
		address{"thumbnail URL", thumbs[0].(map[string]any)["url"].(string)}, address{"snapshot URL", snap["print"].(string)})
	return apiURLs, outside
}

// liveAddresses follows a live multivariant playlist to its first media
// playlist and returns that, its init part and its newest segment, each
// with the query (the token) its playlist gave it.
func liveAddresses(t *testing.T, index string) []address {
	t.Helper()
	refs := func(u string) (base *url.URL, init string, uris []string) {
		_, body, _ := statusOf(u)
		base, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(body, "\n") {
			if rest, ok := strings.CutPrefix(line, "#EXT-X-MAP:URI="); ok {
				init = strings.Trim(strings.SplitN(rest, ",", 2)[0], `"`)
			} else if line != "" && !strings.HasPrefix(line, "#") && strings.Contains(line, "sig=") {
				uris = append(uris, line) // (gap entries carry no token and no data)
			}
		}
		return base, init, uris
	}
	abs := func(base *url.URL, ref string) string {
		u, err := base.Parse(ref)
		if err != nil {
			t.Fatal(err)
		}
		return u.String()
	}
	base, _, uris := refs(index)
	if len(uris) == 0 {
		t.Fatalf("live playlist %s lists nothing", index)
	}
	media := abs(base, uris[0])
	base, init, uris := refs(media)
	if init == "" || len(uris) == 0 {
		t.Fatalf("live media playlist %s: init %q, %d segments", media, init, len(uris))
	}
	return []address{{"live media playlist", media}, {"live init", abs(base, init)}, {"live segment", abs(base, uris[len(uris)-1])}}
}

// TestBlockedUserLosesAccess: a user gathers every address the node hands
// out for its camera (player page and player_digest, recorded playlist and
// its segments, live renewal, recordings, thumbnails, snapshot, live
// playlist, live init and segment, storage URLs), then is blocked. Every
// address the API answers is refused (403) from the next request; the live
// addresses and the storage URLs, checked where no database is, are
// refused within their documented lifetimes (security.live_url_expiry,
// storage.signed_url_expiry), here 8 s.
func TestBlockedUserLosesAccess(t *testing.T) {
	t.Parallel()
	const life = 8 * time.Second
	a, api, token, userID, cam := accessNode(t, life, life)
	apiURLs, outside := gather(t, a, api, token, cam)
	for _, h := range append(append([]address{}, apiURLs...), outside...) {
		if s, body, _ := statusOf(h.url); s != http.StatusOK && s != http.StatusFound {
			t.Fatalf("%s before the block: %d: %.200s", h.name, s, body)
		}
	}
	names := map[string]bool{}
	for _, h := range outside {
		names[h.name] = true
	}
	for _, n := range []string{"live segment", "live init", "recorded segment storage URL", "recording URL", "thumbnail URL", "snapshot URL"} {
		if !names[n] {
			t.Fatalf("no %s gathered: %v", n, outside)
		}
	}

	api.call("GET", "/api/user/block/"+apiOperator+"/"+userID, nil, 200)
	blocked := time.Now()
	for _, h := range apiURLs {
		if s, body, _ := statusOf(h.url); s != http.StatusForbidden {
			t.Errorf("%s after the block: %d, want 403 at once: %.200s", h.name, s, body)
		}
	}
	left := outside
	testenv.WaitFor(t, life+5*time.Second, "every live and storage address refused", func() bool {
		var still []address
		for _, h := range left {
			if s, _, _ := statusOf(h.url); s != http.StatusForbidden {
				still = append(still, h)
			}
		}
		left = still
		return len(left) == 0
	})
	t.Logf("%d API addresses refused at once; %d live and storage addresses refused %v after the block (lifetime %v)",
		len(apiURLs), len(outside), time.Since(blocked).Round(100*time.Millisecond), life)
}

// TestPlayerShortLivedURLs: live URLs live security.live_url_expiry (4 s
// here); the API's player page in headless Chromium renews its URL through
// the API before it expires and keeps playing live well past several
// lifetimes, each request of the stream carrying the newest token. Then it
// plays recordings, whose segments it reads through the API's segment
// addresses, redirected to short-lived MinIO URLs (byte ranges, another
// origin).
func TestPlayerShortLivedURLs(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	const life = 4 * time.Second
	a, api, token, _, cam := accessNode(t, time.Minute, life)
	listed := api.call("GET", "/api/v4/cameras?token="+token, nil, 200).(map[string]any)["data"].([]any)[0].(map[string]any)
	b := headless.Chromium(t)
	page := a.URL() + "/api/camera/" + cam + "/player?player_digest=" + url.QueryEscape(listed["player_digest"].(string))
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Time      float64 `json:"time"`
		LiveExp   string  `json:"liveExp"`
		State     string  `json:"state"`
		Transport string  `json:"transport"`
		Sessions  string  `json:"sessions"`
	}
	read := func() state {
		var s state
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({time: document.getElementById('video').currentTime,
			liveExp: document.body.dataset.liveExp || '', state: document.body.dataset.state || '',
			transport: document.body.dataset.transport || '', sessions: document.body.dataset.webrtcSessions || ''})`, &s)); err != nil {
			t.Fatalf("read the page: %v", err)
		}
		return s
	}
	var start state
	testenv.WaitFor(t, 30*time.Second, "live playback to start", func() bool { start = read(); return start.Time > 0 })
	exps := map[string]bool{start.LiveExp: true}
	var s state
	testenv.WaitFor(t, 8*life+20*time.Second, "live playback 3 URL lifetimes on, through renewals", func() bool {
		s = read()
		exps[s.LiveExp] = true
		if s.State == "error" {
			t.Fatalf("playback failed at %.1f s (renewed %d times)", s.Time, len(exps)-1)
		}
		return s.Time-start.Time >= 3*life.Seconds() && len(exps) >= 3
	})
	// One WebRTC session played throughout: each renewal reached it (a
	// session whose token expires is ended by the node, and the page opens
	// another).
	if s.Transport != "webrtc" || s.Sessions != "1" {
		t.Errorf("live played over %q in %q WebRTC sessions, want webrtc in one", s.Transport, s.Sessions)
	}
	t.Logf("played %.1f s of live video over %s with %d URL renewals", s.Time-start.Time, s.Transport, len(exps)-1)

	recorded := page + "&ts=" + strconv.FormatInt(time.Now().Add(-20*time.Second).Unix(), 10)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(recorded)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "recorded playback", func() bool {
		s = read()
		if s.State == "error" {
			t.Fatalf("recorded playback failed")
		}
		return s.State == "recorded" && s.Time > 1
	})
}
