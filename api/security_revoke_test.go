package api

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// This file holds the revocation attacks: a blocked user (or client)
// replays every address it was ever handed, and a camera moved to another
// client keeps none of its previous client's digests.

// stubLive hands out live URLs of a node that is not there; the API side of
// live access (the player's renewal) is what these tests check.
type stubLive struct{}

func (stubLive) LiveURLs(_ context.Context, camera string, _ bool, exp time.Time) (string, string, error) {
	return "http://live.invalid/live/" + camera + "/index.m3u8?exp=" + strconv.FormatInt(exp.Unix(), 10) + "&sig=x", "http://live.invalid", nil
}

// noRedirect reads an answer without following its redirect.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// fetch GETs u (a path of the server or a full URL) without following a
// redirect.
func (e *env) fetch(u string) (status int, body []byte, location string) {
	e.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = e.http.URL + u
	}
	res, err := noRedirect.Get(u)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ = io.ReadAll(res.Body)
	return res.StatusCode, body, res.Header.Get("Location")
}

// handedOut is an address a user was given.
type handedOut struct {
	name, url string
}

// collect stores a segment, thumbnails and a snapshot of camera id and
// gathers, as the user of token tok, every address the interface hands
// out for it: the API's own (player, playlists, segments, renewal, the
// digest routes) and the storage URLs (recordings, thumbnails, snapshot,
// the segments' redirect targets).
func (e *env) collect(tok string, id int64) (api, store []handedOut) {
	e.t.Helper()
	c := camID(id)
	now := e.clock.Now()
	body := "init" + "segment"
	// A segment whose key carries its init size, and one stored in the
	// older key form (its init size in the metadata only).
	for _, key := range []string{storage.SegmentKey(c, now.Add(-30*time.Minute), 6*time.Second, 4), storage.SegmentKey(c, now.Add(-20*time.Minute), 6*time.Second, 0)} {
		if err := e.store.Put(context.Background(), key,
			strings.NewReader(body), int64(len(body)), storage.PutOptions{Metadata: map[string]string{catalogue.MetaInitSize: "4"}}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.put(storage.MinuteThumbKey(c, now.Add(-time.Minute)), "minute")
	e.put(storage.HourlyThumbKey(c, now.Truncate(time.Hour)), "hour")
	e.put(storage.SnapshotKey(c, now.Add(-time.Minute)), "snapshot")

	var list struct {
		Data []cameraRecord `json:"data"`
	}
	if err := json.Unmarshal(e.do("GET", "/api/v4/cameras?token="+tok, nil).want(e.t, 200).body, &list); err != nil || len(list.Data) != 1 {
		e.t.Fatalf("listing: %v %+v", err, list)
	}
	cam := list.Data[0]
	pd := url.QueryEscape(cam.PlayerDigest)
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	ts := strconv.FormatInt(now.Unix(), 10)
	api = []handedOut{
		{"player page", "/api/camera/" + c + "/player?player_digest=" + pd},
		{"recorded playlist", "/api/camera/" + c + "/vod.m3u8?player_digest=" + pd + "&from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms},
		{"player live renewal", "/api/camera/" + c + "/player/live-url?player_digest=" + pd},
		{"recordings", "/camera/" + c + "/recordings?token=" + tok + "&digest=" + cam.Digest + "&timeStamp=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)},
		{"recordings by hash", "/cameras/" + c + "/recordings/?token=" + tok + "&hash=" + cam.Hash + "&timeStamp=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)},
		{"minute thumbnails", "/api/camera/" + c + "/thumbs-minutes?token=" + tok + "&digest=" + cam.Digest + "&ts=" + ts},
		{"hourly thumbnails", "/api/camera/" + c + "/thumbs-hourly?token=" + tok + "&digest=" + cam.Digest + "&ts=" + ts},
		{"snapshot", "/api/v1/cameras/" + c + "/print?token=" + tok + "&digest=" + cam.Digest},
		{"live url", "/api/camera/" + c + "/live-url?token=" + tok},
		{"player timeline", "/api/camera/" + c + "/player/timeline?player_digest=" + pd + "&from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms},
		{"player thumbnails", "/api/camera/" + c + "/player/thumbs?player_digest=" + pd + "&from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms},
	}
	// The page's own addresses (a playlist and renewal signed for the page).
	status, page, _ := e.fetch(api[0].url)
	m := regexp.MustCompile(`id="vigia-config">([^<]*)<`).FindSubmatch(page)
	if status != 200 || m == nil {
		e.t.Fatalf("player page: %d %.300s", status, page)
	}
	var pc struct {
		VOD   string `json:"vodUrl"`
		Renew string `json:"liveRenewUrl"`
		Live  string `json:"liveUrl"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &pc); err != nil || pc.VOD == "" || pc.Renew == "" || pc.Live == "" {
		e.t.Fatalf("player config: %v %s", err, m[1])
	}
	api = append(api, handedOut{"page's recorded playlist", pc.VOD + "&from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms},
		handedOut{"page's live renewal", pc.Renew})
	// The playlist's segment addresses, and where they redirect.
	status, playlist, _ := e.fetch(api[1].url)
	if status != 200 {
		e.t.Fatalf("playlist: %d %s", status, playlist)
	}
	keyed, older := 0, 0
	for _, line := range strings.Split(string(playlist), "\n") {
		u := line
		if strings.HasPrefix(line, "#EXT-X-MAP:URI=") {
			u = strings.Trim(strings.SplitN(strings.TrimPrefix(line, "#EXT-X-MAP:URI="), ",", 2)[0], `"`)
		}
		if u == "" || strings.HasPrefix(u, "#") {
			continue
		}
		api = append(api, handedOut{"playlist segment", u})
		status, _, loc := e.fetch(u)
		if status != http.StatusFound || loc == "" {
			e.t.Fatalf("segment %s: %d, want a redirect", u, status)
		}
		if file, _, _ := strings.Cut(path.Base(u), "?"); !strings.Contains(loc, "/"+file+"?") {
			e.t.Fatalf("segment %s redirects to %s, not to its object", u, loc)
		}
		store = append(store, handedOut{"segment storage URL", loc})
		if file, _, _ := strings.Cut(path.Base(u), "?"); strings.Count(file, "_") == 2 {
			keyed++
		} else {
			older++
		}
	}
	if keyed == 0 || older == 0 {
		e.t.Fatalf("%d addresses of segments keyed with their init sizes, %d of the older form, want both: %s", keyed, older, playlist)
	}
	// The storage URLs of the listings.
	var recs upperBody
	if err := json.Unmarshal(e.do("GET", api[3].url, nil).want(e.t, 200).body, &recs); err != nil {
		e.t.Fatal(err)
	}
	for _, r := range recs.Data.([]any) {
		store = append(store, handedOut{"recording URL", r.(map[string]any)["url"].(string)})
	}
	for _, i := range []int{5, 6} {
		var th []thumbnail
		if err := json.Unmarshal(e.do("GET", api[i].url, nil).want(e.t, 200).body, &th); err != nil || len(th) == 0 {
			e.t.Fatalf("%s: %v %v", api[i].name, err, th)
		}
		store = append(store, handedOut{api[i].name + " URL", th[0].URL})
	}
	var snap snapshotBody
	if err := json.Unmarshal(e.do("GET", api[7].url, nil).want(e.t, 200).body, &snap); err != nil || snap.Print == "" {
		e.t.Fatalf("snapshot: %v %+v", err, snap)
	}
	store = append(store, handedOut{"snapshot URL", snap.Print}, handedOut{"thumb_url of the listing", cam.ThumbURL})
	if len(store) < 6 {
		e.t.Fatalf("only %d storage URLs handed out", len(store))
	}
	return api, store
}

// wantServed fails unless every address answers 200 (302 for a segment).
func (e *env) wantServed(t *testing.T, when string, urls []handedOut) {
	t.Helper()
	for _, h := range urls {
		if status, body, _ := e.fetch(h.url); status != http.StatusOK && status != http.StatusFound {
			t.Errorf("%s: %s: %d, want it served: %.200s", when, h.name, status, body)
		}
	}
}

// wantRefused fails unless every address answers 403.
func (e *env) wantRefused(t *testing.T, when string, urls []handedOut) {
	t.Helper()
	for _, h := range urls {
		if status, body, _ := e.fetch(h.url); status != http.StatusForbidden {
			t.Errorf("%s: %s: %d, want 403: %.200s", when, h.name, status, body)
		}
	}
}

// TestBlockedUserReplays: a user gathers every address it can (player
// page, player_digest, recorded playlists, segment addresses, renewal,
// recordings, thumbnails and snapshot with their storage URLs, live URL),
// then is blocked. From the next request every address the API answers is
// refused (403); the storage URLs, which cannot be recalled, are refused
// once storage.signed_url_expiry has passed, and not one second later.
// Unblocking does not bring the old player_digest back. Blocking the
// client refuses the operator's player_digest of its cameras too.
func TestBlockedUserReplays(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.srv.cfg.Live = stubLive{}
		clientID, userID, tok := e.clientWithUser("leaver@example.com")
		id := e.camera(clientID)
		api, store := e.collect(tok, id)
		e.wantServed(t, "before the block", append(append([]handedOut{}, api...), store...))

		e.do("GET", "/api/user/block/"+testOperator+"/"+itoa(userID), nil).want(t, 200)
		e.wantRefused(t, "blocked user", api)
		e.wantServed(t, "blocked user, storage URLs within their lifetime", store)
		e.clock.Set(e.clock.Now().Add(e.srv.cfg.SignedURLExpiry + time.Second))
		e.wantRefused(t, "blocked user, storage URLs past their lifetime", store)

		// Unblocked: the token works again, the old player_digest does not.
		e.do("GET", "/api/user/unblock/"+testOperator+"/"+itoa(userID), nil).want(t, 200)
		var old []handedOut
		for _, h := range api {
			if strings.Contains(h.url, "player_digest=") {
				old = append(old, h)
			}
		}
		e.wantRefused(t, "unblocked user, player_digest of before the block", old)
		api, store = e.collect(tok, id)
		e.wantServed(t, "unblocked user, new addresses", append(append([]handedOut{}, api...), store...))

		// The client blocked: its users' and the operator's player_digest.
		opPlayer := "/api/camera/" + camID(id) + "/player?player_digest=" + url.QueryEscape(e.digest(PurposePlayer, id))
		e.wantServed(t, "operator's player_digest", []handedOut{{"player", opPlayer}})
		cl, err := e.db.Client(context.Background(), clientID)
		if err != nil {
			t.Fatal(err)
		}
		e.do("GET", "/api/client/block/"+testOperator+"/"+cl.DocumentNumber, nil).want(t, 200)
		e.wantRefused(t, "blocked client", append(api, handedOut{"operator's player", opPlayer}))
	})
}

// TestMovedCameraDigests: a camera moved to another client. Every digest,
// hash and player_digest handed out before (to the old client's user and
// to the operator) is refused, whoever presents it; the new client's users
// get working ones.
func TestMovedCameraDigests(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.srv.cfg.Live = stubLive{}
		clientA, _, tokA := e.clientWithUser("old-owner@example.com")
		clientB, _, tokB := e.clientWithUser("new-owner@example.com")
		id := e.camera(clientA)
		apiA, _ := e.collect(tokA, id)
		opDigest, opPlayer := e.digest(PurposeDigest, id), e.digest(PurposePlayer, id)
		c := camID(id)
		ts := strconv.FormatInt(e.clock.Now().Unix(), 10)
		opURLs := []handedOut{
			{"operator's player_digest", "/api/camera/" + c + "/player?player_digest=" + url.QueryEscape(opPlayer)},
			{"old digest with the operator token", "/api/camera/" + c + "/thumbs-hourly?token=" + testOperator + "&digest=" + opDigest + "&ts=" + ts},
		}
		e.wantServed(t, "before the move", opURLs)

		move := rtspCamera(clientB, "203.0.113.7")
		e.do("PUT", op("/api/v1/cameras/"+c), move).want(t, 201)

		var byDigest []handedOut
		for _, h := range apiA {
			if strings.Contains(h.url, "player_digest=") {
				byDigest = append(byDigest, h)
			}
		}
		e.wantRefused(t, "moved camera", append(byDigest, opURLs...))
		// The old client's token no longer sees the camera at all.
		for _, h := range apiA {
			if strings.Contains(h.url, "token=") {
				if status, body, _ := e.fetch(h.url); status != http.StatusNotFound {
					t.Errorf("moved camera: %s with the old client's token: %d, want 404: %.200s", h.name, status, body)
				}
			}
		}
		apiB, storeB := e.collect(tokB, id)
		e.wantServed(t, "new client", append(apiB, storeB...))
	})
}
